import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_VARIABLES } from '../../config/variables.ts';
import { DOC_PAGES, ROOT } from '../support/doc-pages.ts';

/**
 * Every environment variable the documentation names exists: a setting of config/variables.ts (what
 * the product reads, docs/reference.md), or a variable of the tests, the benches, the scripts or the
 * compose file (RECON_SCREENSHOTS, BENCH_ROWS, TEMPORAL_DB_PASSWORD), which the code there reads. A
 * name the docs give that nothing reads (renamed, removed, misspelt) fails here.
 */

/** How the docs name a variable: the product's prefixes, the benches' and the database URL. */
const NAMED = /\b(?:RECON|TEMPORAL|BENCH)_[A-Z0-9_]*[A-Z0-9]\b|\bDATABASE_URL\b/g;
/** Where the variables that are not the product's settings are read. */
const OTHER_READERS = ['test', 'bench', 'scripts', 'docker-compose.yml', 'package.json', 'Dockerfile'];

function filesUnder(path: string): string[] {
  const full = join(ROOT, path);
  if (!statSync(full, { throwIfNoEntry: false })) return [];
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full).flatMap((name) => filesUnder(join(path, name)));
}

/** The variables named in the docs, each with the first doc that names it. */
function variablesNamedIn(docs: readonly { path: string; text: string }[]): Map<string, string> {
  const named = new Map<string, string>();
  for (const doc of docs) {
    for (const m of doc.text.matchAll(NAMED)) if (!named.has(m[0])) named.set(m[0], doc.path);
  }
  return named;
}

describe('the environment variables the documentation names', () => {
  it('are settings of config/variables.ts, or read by the tests, benches, scripts or compose file', () => {
    const named = variablesNamedIn(
      DOC_PAGES.map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') })),
    );
    expect(named.size).toBeGreaterThan(30);
    const settings = new Set(ENVIRONMENT_VARIABLES.map((v) => v.name));
    const elsewhere = OTHER_READERS.flatMap(filesUnder)
      .filter(
        (f) => /\.(ts|mjs|js|sh|yml|json)$|Dockerfile$/.test(f) && !f.endsWith('docs-variables.test.ts'),
      )
      .map((f) => readFileSync(join(ROOT, f), 'utf8'))
      .join('\n');
    const unknown = [...named]
      .filter(([name]) => !settings.has(name) && !new RegExp(`\\b${name}\\b`).test(elsewhere))
      .map(([name, doc]) => `${name} (named in ${doc})`);
    expect(unknown, 'rename them in the docs, or add the setting to config/variables.ts').toEqual([]);
  });
});
