/**
 * The parsers of provider/formats, behind a function that imports them on first use (`recon --help` and the
 * commands that load nothing do not pay for them), and that tests can replace with their own rows.
 */
import type { parseLedger, parseReport } from '../../provider/formats/index.ts';

export interface Parsers {
  parseReport: typeof parseReport;
  parseLedger: typeof parseLedger;
}

export async function loadParsers(): Promise<Parsers> {
  const { parseLedger, parseReport } = await import('../../provider/formats/index.ts');
  return { parseReport, parseLedger };
}
