import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// No file over 450 lines outside test/ and migrations/: a long file is a module waiting to be split.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const LIMIT = 450;
const SKIPPED_DIRS = new Set([
  'node_modules',
  'test',
  'migrations',
  '.git',
  '.data',
  '.cache',
  'dist',
  'coverage',
]);
const EXEMPT = new Set([
  // Being split into one builder per rule by the reconcile/rules work; remove once that lands.
  'reconcile/rules/match-rules.ts',
]);

function* tsFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name) && !entry.name.startsWith('.')) yield* tsFiles(join(dir, entry.name));
    } else if (entry.name.endsWith('.ts')) {
      yield join(dir, entry.name);
    }
  }
}

export function oversizedFiles(root: string, limit: number): string[] {
  const offenders: string[] = [];
  for (const file of tsFiles(root)) {
    const path = relative(root, file);
    if (EXEMPT.has(path)) continue;
    const lines = readFileSync(file, 'utf8').split('\n').length - 1;
    if (lines > limit) offenders.push(`${path}: ${lines} lines`);
  }
  return offenders.sort();
}

describe('file size', () => {
  it(`keeps every .ts file outside test/ and migrations/ at ${LIMIT} lines or fewer`, () => {
    expect(oversizedFiles(ROOT, LIMIT)).toEqual([]);
  });

  it('names an offender with its line count', () => {
    // The same walk with a limit every real module exceeds lists files as "path: N lines".
    const offenders = oversizedFiles(ROOT, 5);
    expect(offenders).toContain(
      `sandbox/server.ts: ${readFileSync(join(ROOT, 'sandbox/server.ts'), 'utf8').split('\n').length - 1} lines`,
    );
  });
});
