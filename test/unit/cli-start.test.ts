import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packagesHook, packagesLoaded } from '../support/packages-hook.ts';

const ROOT = join(import.meta.dirname, '../..');

// Each command imports its heavy dependencies when it runs (cli/program.ts): a command that needs no
// database must not load the database libraries at start. Kysely alone is 255 modules, about 0.1 s
// of every start when one module the command line reads imported it (docs/benchmark-record.md §3).

const dir = mkdtempSync(join(tmpdir(), 'recon-cli-start-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `recon <args>` with the hook: its exit status and the packages it resolved before it exited. */
function recon(args: readonly string[]): { status: number | null; packages: string | undefined } {
  const r = spawnSync(process.execPath, [...packagesHook(dir), join(ROOT, 'bin/recon.mjs'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return { status: r.status, packages: packagesLoaded(r.stderr) };
}

describe('the command line starts without the libraries it does not use', () => {
  for (const args of [['--version'], ['--help'], ['discrepancies', 'list', '--help'], ['import', '--help']]) {
    it(`recon ${args.join(' ')} loads commander alone`, () => {
      const r = recon(args);
      expect(r.status).toBe(0);
      expect(r.packages).toBe('commander');
    });
  }
});
