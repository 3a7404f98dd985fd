import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');

// Each command imports its heavy dependencies when it runs (cli/program.ts): a command that needs no
// database must not load the database libraries at start. Kysely alone is 255 modules, about 0.1 s
// of every start when one module the command line reads imported it (docs/benchmarks.md, section 3).
const HOOK = `import { registerHooks } from 'node:module';
const packages = new Set();
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    const m = /\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(resolved.url);
    if (m) packages.add(m[1]);
    return resolved;
  },
});
process.on('exit', () => process.stderr.write('packages: ' + [...packages].sort().join(' ') + '\\n'));
`;

const dir = mkdtempSync(join(tmpdir(), 'recon-cli-start-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `recon <args>` with the hook: its exit status and the packages it resolved before it exited. */
function recon(args: readonly string[]): { status: number | null; packages: string | undefined } {
  const hook = join(dir, 'hook.mjs');
  writeFileSync(hook, HOOK);
  const r = spawnSync(process.execPath, ['--import', hook, join(ROOT, 'bin/recon.mjs'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  const line = r.stderr.split('\n').find((l) => l.startsWith('packages: '));
  return { status: r.status, packages: line?.slice('packages: '.length) };
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
