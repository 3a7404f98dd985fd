import { parseLedger, parseReport } from '../parse/index.ts';

/**
 * The parsers of lib/parse (area 1), behind a function so that command modules can import them
 * lazily and tests can hand the loader their own rows instead.
 */
export interface Parsers {
  parseReport: typeof parseReport;
  parseLedger: typeof parseLedger;
}

export async function loadParsers(): Promise<Parsers> {
  return { parseReport, parseLedger };
}
