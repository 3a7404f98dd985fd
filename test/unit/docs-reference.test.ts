import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_VARIABLES } from '../../config/variables.ts';
import { freshReference, REFERENCE_PATH } from '../../scripts/write-reference.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The folders of application code: what a user runs (tests, benchmarks and scripts are not). */
const APPLICATION = [
  'activities',
  'bin',
  'cli',
  'config',
  'db',
  'domain',
  'ingest',
  'observability',
  'provider',
  'reconcile',
  'sandbox',
  'workbench',
  'workers',
  'workflows',
];
/** How the code names an environment variable it reads. */
const VARIABLE = /\b(?:RECON|TEMPORAL)_[A-Z0-9_]*[A-Z0-9]\b|\bDATABASE_URL\b|\benv\.PORT\b|'PORT'/g;
/**
 * Names that look like variables and are not settings: built at run time (the sandbox's per-account
 * secrets), or a constant (RECON_ACTOR, the actor of a write-off made by a run).
 */
const NOT_CONFIGURATION = new Set(['RECON_SANDBOX', 'RECON_ACTOR']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|js)$/.test(name) && !path.endsWith(join('config', 'variables.ts')) ? [path] : [];
  });
}

function variablesReadByTheCode(): Map<string, string> {
  const found = new Map<string, string>();
  for (const folder of APPLICATION) {
    for (const file of sourceFiles(join(ROOT, folder))) {
      for (const m of readFileSync(file, 'utf8').matchAll(VARIABLE)) {
        const name = m[0].replace(/^env\./, '').replaceAll("'", '');
        if (!NOT_CONFIGURATION.has(name) && !found.has(name)) found.set(name, file.slice(ROOT.length + 1));
      }
    }
  }
  return found;
}

describe('docs/reference.md', () => {
  it('is what the commands and config/variables.ts say (run `npm run docs:reference` when this fails)', async () => {
    const committed = readFileSync(REFERENCE_PATH, 'utf8');
    expect(committed).toContain('### recon import');
    expect(committed).toContain('`RECON_ACCOUNTS_FILE`');
    expect(committed).toBe(await freshReference(committed));
  });

  it('lists every environment variable the code reads, and none that it does not', () => {
    const read = variablesReadByTheCode();
    const listed = new Set(ENVIRONMENT_VARIABLES.map((v) => v.name));
    const unlisted = [...read].filter(([name]) => !listed.has(name)).map(([n, f]) => `${n} (read in ${f})`);
    expect(unlisted, 'add them to config/variables.ts').toEqual([]);
    expect(
      [...listed].filter((name) => !read.has(name)),
      'read nowhere: remove them from config/variables.ts',
    ).toEqual([]);
  });

  it('.env.example names only variables of the reference, with no value for a secret', () => {
    const listed = new Map(ENVIRONMENT_VARIABLES.map((v) => [v.name, v]));
    const lines = readFileSync(join(ROOT, '.env.example'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '' && !l.startsWith('#'));
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) {
      const [name, value] = line.split('=') as [string, string | undefined];
      expect(listed.has(name), `${name} is not in config/variables.ts`).toBe(true);
      if (listed.get(name)?.secret) expect(value, `${name} is a secret`).toBe('');
    }
  });
});
