import type { Readable } from 'node:stream';
import type { LedgerRecord, ParsedRow, ReportFormat, ReportRecord } from '../records.ts';

/** The parser contract of lib/parse/index.ts (area 1), as the loader uses it. */
export interface Parsers {
  parseReport(
    input: Readable,
    o: { format: ReportFormat; queryType?: string; fields?: number[]; fileName: string },
  ): AsyncIterable<ParsedRow<ReportRecord>>;
  parseLedger(input: Readable, o: { fileName: string }): AsyncIterable<ParsedRow<LedgerRecord>>;
}

/** Loaded on first use: `recon parse` and the loader share it, and importing it is not free. */
export async function loadParsers(): Promise<Parsers> {
  const specifier = '../parse/index.ts';
  return (await import(specifier)) as Parsers;
}
