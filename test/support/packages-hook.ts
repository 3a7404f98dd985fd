import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

// Which packages a command loads: a resolve hook (node --import) that notes every package of
// node_modules a module resolves to and prints them on stderr when the process exits. Kysely alone is
// 255 modules, about 0.1 s of a command's start (docs/benchmark-record.md §3).
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

/** Node's arguments that load the hook, written into `dir`. */
export function packagesHook(dir: string): string[] {
  const hook = join(dir, 'packages-hook.mjs');
  writeFileSync(hook, HOOK);
  return ['--import', hook];
}

/** The packages the hook printed on `stderr`, space-separated and sorted; undefined if it printed none. */
export function packagesLoaded(stderr: string): string | undefined {
  const line = stderr.split('\n').find((l) => l.startsWith('packages: '));
  return line?.slice('packages: '.length);
}
