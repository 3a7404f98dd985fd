import { NotAReport } from '../../domain/errors.ts';
import { quotedStart, START_CHARS } from '../../domain/redact-secrets.ts';
import type { ParsedRow } from '../../domain/records.ts';

/**
 * Passes the parsed rows through and, when the input held rows and none of them is a record, throws
 * {@link NotAReport} after the last one, so that the loader keeps nothing of it. The provider does not
 * describe the error bodies of its legacy interface, which answers them with HTTP 200: an error line,
 * an HTML login page or a layout of another width parse as lines that are all rejected, and such an
 * answer must not look like a quiet day. An input without rows (empty, blank lines, a CSV header
 * alone, `[]`) is a valid empty report.
 */
export async function* requireRecords<R>(
  rows: AsyncIterable<ParsedRow<R>>,
  fileName: string,
): AsyncGenerator<ParsedRow<R>> {
  let records = 0;
  let rejected = 0;
  let first: { line: number; reason: string } | null = null;
  let start = '';
  for await (const row of rows) {
    if (row.ok) records++;
    else {
      rejected++;
      first ??= { line: row.line, reason: row.reason };
      if (records === 0 && start.length < START_CHARS)
        start += `${start ? ' ' : ''}${row.raw.slice(0, 4 * START_CHARS)}`;
    }
    yield row;
  }
  if (records === 0 && first !== null) {
    throw new NotAReport(fileName, rejected, first, quotedStart(start));
  }
}
