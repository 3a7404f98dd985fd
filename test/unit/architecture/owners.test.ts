import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// One owner for each idea (docs/architecture.md, "One owner for each idea"): no import circle, the
// account-name pattern written once, settings read in config/, functions a person can hold in mind.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SKIPPED = new Set(['node_modules', 'test', 'migrations', 'dist', 'coverage']);

function* tsFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED.has(entry.name) && !entry.name.startsWith('.')) yield* tsFiles(join(dir, entry.name));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      yield join(dir, entry.name);
    }
  }
}

const FILES = [...tsFiles(ROOT)].map((f) => relative(ROOT, f)).sort();
const text = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const source = (file: string) => ts.createSourceFile(file, text(file), ts.ScriptTarget.Latest, true);

/** The repository files a file imports statically (import and export ... from, types included). */
function importsOf(file: string): string[] {
  const out: string[] = [];
  for (const statement of source(file).statements) {
    const spec =
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
        ? statement.moduleSpecifier.text
        : undefined;
    if (spec?.startsWith('.')) out.push(relative(ROOT, resolve(ROOT, dirname(file), spec)));
  }
  return out;
}

/** Every import circle of a graph (file -> files it imports), each as the files around it. */
export function circlesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const circles: string[][] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    stack.push(f);
    for (const g of graph.get(f) ?? []) {
      if (state.get(g) === 'open') circles.push(stack.slice(stack.indexOf(g)));
      else if (!state.has(g)) visit(g);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  return circles;
}

/** The import circles among these files. */
export function importCircles(files: readonly string[]): string[][] {
  return circlesOf(new Map(files.map((f) => [f, importsOf(f).filter((g) => files.includes(g))])));
}

/** Functions (declarations, methods, arrows, expressions) longer than `limit` lines, as "file:name N". */
export function longFunctions(files: readonly string[], limit: number): string[] {
  const out: string[] = [];
  for (const file of files) {
    const sf = source(file);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const start = sf.getLineAndCharacterOfPosition(node.body.getStart(sf)).line;
        const end = sf.getLineAndCharacterOfPosition(node.body.getEnd()).line;
        const lines = end - start + 1;
        if (lines > limit) {
          const named = node as ts.Node & { name?: ts.Node };
          const parent = node.parent as ts.Node & { name?: ts.Node };
          const name = named.name?.getText(sf) ?? parent?.name?.getText(sf) ?? '(anonymous)';
          out.push(`${file}:${name}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out.sort();
}

describe('one owner for each idea', () => {
  it('has no import circle in production code or bench/', () => {
    expect(importCircles(FILES)).toEqual([]);
  });

  it('finds a circle where there is one', () => {
    // The check itself, on a graph with one circle of three and a tail.
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts', 'd.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', []],
    ]);
    expect(circlesOf(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('keeps domain/ at the bottom: it imports nothing of the other folders, not even types', () => {
    // domain/ owns the types it names (the records' fields are domain/record-columns.ts; db/ builds
    // its tables from them), so no import runs back up from it.
    const upward = FILES.filter((f) => f.startsWith('domain/')).flatMap((f) =>
      importsOf(f)
        .filter((g) => !g.startsWith('domain/'))
        .map((g) => `${f} -> ${g}`),
    );
    expect(upward).toEqual([]);
  });

  it('writes the account-name pattern once outside test/ and migrations/ (domain/account-name.ts)', () => {
    const pattern = '[a-z0-9-]{1,32}';
    expect(FILES.filter((f) => text(f).includes(pattern))).toEqual(['domain/account-name.ts']);
  });

  it('reads process.env in config/ only (and test/, bench/)', () => {
    const readers = FILES.filter(
      (f) => !f.startsWith('config/') && !f.startsWith('bench/') && text(f).includes('process.env'),
    );
    expect(readers).toEqual([]);
  });

  it('keeps every function at 100 lines or fewer (issue 27, section 6)', () => {
    expect(longFunctions(FILES, 100)).toEqual([]);
  });
});
