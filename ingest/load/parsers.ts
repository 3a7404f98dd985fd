/**
 * The parsers of provider/formats, behind a function that imports them on first use (`recon --help` and the
 * commands that load nothing do not pay for them), and that tests can replace with their own rows.
 */
import type { OnColumns } from '../../domain/records.ts';
import type { RecordKind } from '../../domain/sources.ts';
import type { parseLedger, parseReport } from '../../provider/formats/index.ts';
import type { ParseRows } from './load-rows.ts';

export interface Parsers {
  parseReport: typeof parseReport;
  parseLedger: typeof parseLedger;
}

export async function loadParsers(): Promise<Parsers> {
  const { parseLedger, parseReport } = await import('../../provider/formats/index.ts');
  return { parseReport, parseLedger };
}

/**
 * A load's parser and the columns it carries per kind: `parse` when a test gives its own rows, or the
 * parser `choose` makes, told to note the columns of each kind it reads (the merge reads them; the
 * CSV header or the NDJSON keys decide).
 */
export async function parserNotingColumns(
  parse: ParseRows | undefined,
  choose: (parsers: Parsers, onColumns: OnColumns) => ParseRows,
): Promise<{ parseRows: ParseRows; carried: Map<RecordKind, readonly string[]> }> {
  const carried = new Map<RecordKind, readonly string[]>();
  const parseRows = parse ?? choose(await loadParsers(), (kind, columns) => carried.set(kind, columns));
  return { parseRows, carried };
}
