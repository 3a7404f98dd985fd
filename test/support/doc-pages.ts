import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root, for the docs tests' reads. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The documentation's pages, relative to ROOT: README.md and every page of docs/. */
export const DOC_PAGES: readonly string[] = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
