import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOC_PAGES, ROOT } from '../support/doc-pages.ts';

/**
 * Every file of the repository the documentation names in its text (`bench/matching.ts`,
 * `test/integration/warehouse-cli.test.ts`, `node bench/load-child.mjs`) exists, as docs-links checks
 * the links: a file renamed or removed leaves no reader looking for it. docs/benchmark-record.md is
 * left out: it records what was measured, with the files of its time (`bench/load-child.ts`, a
 * JavaScript file since). And every `npm run` script they give is one of package.json's.
 */

const RECORD = 'docs/benchmark-record.md';
const DOCS = DOC_PAGES.filter((doc) => doc !== RECORD);
/** The repository's top folders (a path the docs give starts with one). */
const FOLDERS = readdirSync(ROOT).filter(
  (f) => !f.startsWith('.') && f !== 'node_modules' && statSync(join(ROOT, f)).isDirectory(),
);
const EXTENSIONS = 'ts|mjs|js|sh|md|json|yml|yaml|csv|sql|txt|ndjson|zip|png';

/** The repository paths a text names: a top folder, then a file name with one of the extensions. */
function pathsNamedIn(text: string, folders: readonly string[] = FOLDERS): string[] {
  const path = new RegExp(
    `(?<![\\w./-])((?:${folders.join('|')})/[\\w/.-]*\\.(?:${EXTENSIONS}))(?![\\w/-])`,
    'g',
  );
  return [...text.matchAll(path)].map((m) => m[1] as string);
}

describe('the files the documentation names', () => {
  it('finds paths in prose, code spans and commands', () => {
    expect(
      pathsNamedIn('see `bench/matching.ts`, run node bench/load-child.mjs --rows 1, not notbench/x.ts', [
        'bench',
      ]),
    ).toEqual(['bench/matching.ts', 'bench/load-child.mjs']);
  });

  it('exist', () => {
    const missing: string[] = [];
    let named = 0;
    for (const doc of DOCS) {
      for (const path of pathsNamedIn(readFileSync(join(ROOT, doc), 'utf8'))) {
        named++;
        if (!existsSync(join(ROOT, path))) missing.push(`${doc}: ${path}`);
      }
    }
    expect(named).toBeGreaterThan(100);
    expect(missing).toEqual([]);
  });
});

/** The code of a markdown text: its fenced blocks and its code spans. */
function codeOf(text: string): string {
  const blocks = [...text.matchAll(/```[^\n]*\n([^]*?)```/g)].map((m) => m[1] as string);
  const spans = [...text.replace(/```[^]*?```/g, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1] as string);
  return [...blocks, ...spans].join('\n');
}

describe('the npm scripts the documentation runs', () => {
  it('are scripts of package.json (`npm run docs:reference`, `npm run test:faults`)', () => {
    const scripts = Object.keys(
      (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
        .scripts,
    );
    const unknown: string[] = [];
    let named = 0;
    for (const doc of [...DOCS, RECORD]) {
      for (const m of codeOf(readFileSync(join(ROOT, doc), 'utf8')).matchAll(
        /\bnpm run ([a-z][\w:.-]*\w)/g,
      )) {
        named++;
        if (!scripts.includes(m[1] as string)) unknown.push(`${doc}: npm run ${m[1]}`);
      }
    }
    expect(named).toBeGreaterThan(10);
    expect(unknown).toEqual([]);
  });
});
