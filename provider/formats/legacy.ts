import type { Readable } from 'node:stream';
import type { LegacyQueryType, OnColumns, ParsedRow, ReportRecord } from '../../domain/records.ts';
import { FieldProblem } from './legacy/fields.ts';
import { legacyColumns, legacySelection } from './legacy/layout.ts';
import { adjustmentRecord, returnRecord, transactionRecord } from './legacy/records.ts';
import { isBlank, readLines } from './read-lines.ts';

/**
 * Legacy query interface CSV (docs/provider-interface.md 2.3, 4.4): no header, one record per line, fields
 * separated by commas, Eastern dates and times, implied-decimal amounts.
 *
 * A record that does not validate (wrong number of fields, non-digit amount, impossible date, bad
 * currency, a field longer than its spec size) is yielded as a rejected row whose reason names the
 * field; it never stops the file. Blank lines carry no record and are skipped. Option errors (unknown
 * query type, bad `fields` selection) are thrown by the call itself, before anything is read.
 */

export { legacyColumns, legacySelection } from './legacy/layout.ts';
export { adjustmentKey } from './legacy/records.ts';

export interface LegacyOptions {
  readonly queryType: string | undefined;
  /** The `response_fields` selection, columns in the order listed (types 5 and 6 only). */
  readonly fields?: readonly number[] | undefined;
  readonly fileName: string;
  /** Told the columns the selection carries, before the first record. */
  readonly onColumns?: OnColumns | undefined;
}

/**
 * Parses a legacy CSV (query type 1, 4, 5 or 6) into normalised records.
 * @throws InvalidParseOption at call time for bad options (see {@link legacySelection}).
 * @throws UnreadableInput while iterating only when the stream is not line-oriented text.
 */
export function parseLegacy(
  input: Readable | AsyncIterable<Buffer | string>,
  options: LegacyOptions,
): AsyncGenerator<ParsedRow<ReportRecord>> {
  const selection = legacySelection(options.queryType, options.fields);
  const queryType = options.queryType as LegacyQueryType;
  const parseRow = rowParser(queryType, selection);
  const carried = legacyColumns(queryType, options.fields);
  options.onColumns?.(carried.kind, carried.columns);
  return iterate(input, options.fileName, parseRow);
}

async function* iterate(
  input: AsyncIterable<Buffer | string>,
  fileName: string,
  parseRow: (raw: string, line: number) => ParsedRow<ReportRecord>,
): AsyncGenerator<ParsedRow<ReportRecord>> {
  for await (const batch of readLines(input, fileName)) {
    const { lines, first } = batch;
    for (let i = 0; i < lines.length; i++) {
      const raw = lines[i] as string;
      if (isBlank(raw)) continue;
      yield parseRow(raw, first + i);
    }
  }
}

/** Builds the function that turns one line into a parsed row, for a query type and field selection. */
export function rowParser(
  queryType: LegacyQueryType,
  selection: readonly number[] | null,
): (raw: string, line: number) => ParsedRow<ReportRecord> {
  const build =
    queryType === '1'
      ? returnRecord
      : queryType === '4'
        ? adjustmentRecord
        : transactionRecord(queryType, selection as readonly number[]);
  return (raw, line) => {
    try {
      return { ok: true, line, raw, record: build(raw) };
    } catch (error) {
      if (error instanceof FieldProblem) return { ok: false, line, raw, reason: error.message };
      throw error;
    }
  };
}
