import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SOURCES } from '../../domain/records.ts';
import {
  kindOfLegacyQuery,
  LEGACY_QUERY_TYPES,
  MAX_WINDOW_DAYS,
  rowSource,
  SOURCE_TABLE,
  sourceOfQuery,
} from '../../domain/sources.ts';
import { pullWindow } from '../../ingest/pull-source.ts';
import { reportFileOptions } from '../../ingest/load/source-of.ts';
import { buildLegacyForm } from '../../provider/client/legacy-limits.ts';
import { splitWindows } from '../../workflows/windows.ts';

describe('the source table', () => {
  it('maps every source to its query and back, in each of its formats', () => {
    for (const source of SOURCES) {
      const spec = SOURCE_TABLE[source];
      for (const format of spec.formats) expect(sourceOfQuery(format, spec.queryType)).toBe(source);
      expect(rowSource(spec.kind, spec.api === 'legacy')).toBe(source);
    }
    expect(sourceOfQuery('legacy', '6')).toBe('legacy-transactions');
    expect(sourceOfQuery('legacy', 'TRANSACTION')).toBeUndefined();
    expect(sourceOfQuery('report-csv', '5')).toBeUndefined();
    expect(LEGACY_QUERY_TYPES).toEqual(['1', '4', '5', '6']);
    expect(kindOfLegacyQuery('1')).toBe('return');
    expect(kindOfLegacyQuery('6')).toBe('legacy-transaction');
    expect(rowSource('transaction', true)).toBe('legacy-transactions');
    expect(rowSource('ledger', false)).toBe('ledger');
  });

  it('agrees with the command line file options', () => {
    for (const source of SOURCES) {
      const spec = SOURCE_TABLE[source];
      for (const format of spec.formats) {
        expect(reportFileOptions({ format, queryType: spec.queryType }).source).toBe(source);
      }
    }
  });

  it('gives one window limit to the pull, the legacy query and the workflows', () => {
    const last = (days: number) => new Date(Date.UTC(2026, 0, days)).toISOString().slice(0, 10);
    const credentials = { merchantId: 'm', merchantPass: 'p' };
    expect(pullWindow('2026-01-01', last(MAX_WINDOW_DAYS)).days).toBe(MAX_WINDOW_DAYS);
    expect(() => pullWindow('2026-01-01', last(MAX_WINDOW_DAYS + 1))).toThrow(`at most ${MAX_WINDOW_DAYS}`);
    expect(() =>
      buildLegacyForm({ queryType: '1', from: '2026-01-01', to: last(MAX_WINDOW_DAYS) }, credentials),
    ).not.toThrow();
    expect(() =>
      buildLegacyForm({ queryType: '1', from: '2026-01-01', to: last(MAX_WINDOW_DAYS + 1) }, credentials),
    ).toThrow(`the limit is ${MAX_WINDOW_DAYS}`);
    expect(splitWindows('2026-01-01', last(MAX_WINDOW_DAYS + 1))).toHaveLength(2);
  });

  it('stays importable by workflows: type imports only', () => {
    const text = readFileSync(new URL('../../domain/sources.ts', import.meta.url), 'utf8');
    const imports = text.match(/^import .*$/gm) ?? [];
    expect(imports.every((line) => line.startsWith('import type '))).toBe(true);
  });
});
