import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import layers, { layerOf } from '../../../scripts/eslint/layers.ts';

const ROOT = process.cwd();

/** Lints one line of code as if it were written in `file` (repository-relative), with the layers rule only. */
function lint(file: string, code: string): string[] {
  const linter = new Linter({ cwd: ROOT });
  const messages = linter.verify(
    code,
    [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser as Linter.Parser, sourceType: 'module' },
        plugins: { recon: layers },
        rules: { 'recon/layers': 'error' },
      },
    ],
    `${ROOT}/${file}`,
  );
  return messages.map((m) => m.message);
}

describe('the layers rule (imports point toward domain/)', () => {
  it('refuses an import against the direction, naming both layers and the target', () => {
    // Types included: the contracts between stages live in domain/ (domain/run-summary.ts), so no
    // stage takes a type from the workflows above it.
    expect(lint('reconcile/alerts/x.ts', "import type { A } from '../../workflows/types.ts';")).toHaveLength(
      1,
    );
    expect(lint('activities/x.ts', "import type { A } from '../workflows/types.ts';")).toHaveLength(1);
    expect(lint('reconcile/alerts/x.ts', "import { A } from '../../workflows/types.ts';")).toHaveLength(1);
    const [message] = lint('domain/money.ts', "import { x } from '../ingest/load/load-rows.ts';");
    expect(message).toMatch(/^domain\/ may not import ingest\/ \(ingest\/load\/load-rows.ts\)/);
    expect(lint('db/connect.ts', "import { loadConfig } from '../config/config.ts';")).toHaveLength(1);
    expect(lint('reconcile/report/x.ts', "import { a } from '../../workbench/pages/html.ts';")).toHaveLength(
      1,
    );
    expect(lint('workflows/x.ts', "import { a } from '../activities/index.ts';")).toHaveLength(1);
    expect(lint('ingest/x.ts', "const m = await import('../sandbox/server.ts');")).toHaveLength(1);
    expect(lint('domain/records.ts', "import type { Database } from '../db/database.ts';")).toHaveLength(1);
  });

  it('keeps sandbox/ out of everything but cli/, test/ and bench/', () => {
    for (const file of ['workers/x.ts', 'reconcile/x.ts', 'activities/x.ts', 'provider/x.ts']) {
      expect(lint(file, "import { startSandbox } from '../sandbox/server.ts';"), file).toHaveLength(1);
    }
    expect(lint('cli/sandbox.ts', "import { startSandbox } from '../sandbox/server.ts';")).toEqual([]);
    expect(lint('test/x.test.ts', "import { startSandbox } from '../sandbox/server.ts';")).toEqual([]);
  });

  it('allows imports along the direction, and type-only imports where the table says so', () => {
    expect(lint('ingest/x.ts', "import { a } from '../domain/money.ts';")).toEqual([]);
    expect(lint('workbench/x.ts', "import { a } from '../reconcile/report/report-data.ts';")).toEqual([]);
    expect(lint('workflows/x.ts', "import type { A } from '../domain/run-summary.ts';")).toEqual([]);
    expect(lint('workflows/x.ts', "import type * as activities from '../activities/index.ts';")).toEqual([]);
  });

  it('treats the workbench as an application over reconcile/', () => {
    expect(layerOf('workbench/server.ts')).toBe('workbench');
    expect(layerOf('reconcile/rules/run-rules.ts')).toBe('reconcile');
    expect(layerOf('test/support/database.ts')).toBeUndefined();
  });
});
