import { UnreadableInput } from '../../domain/errors.ts';
import { isBlank, readLines, splitCsvLine } from './read-lines.ts';

/**
 * One CSV record: its fields (null when its quoting is malformed), the exact text (lines joined with
 * `\n` when a quoted field spans lines) and the line where it starts.
 */
export interface CsvRecord {
  readonly fields: string[] | null;
  readonly raw: string;
  readonly line: number;
}

/** Lines a quoted field may span before the input is judged unreadable. */
const MAX_RECORD_LINES = 1000;

/** A CSV record refused as a row of its file: its line, its text and why (a rejected row). */
export function rejectedRecord(rec: CsvRecord, reason: string) {
  return { ok: false, line: rec.line, raw: rec.raw, reason } as const;
}

/**
 * Reads RFC 4180 CSV (quoted fields with commas, doubled quotes, line breaks inside quotes; CRLF or LF;
 * a missing final newline) as records, in batches, with memory bounded by one record. Blank lines are
 * skipped. A record is complete when it holds an even number of double quotes.
 * @throws UnreadableInput when a quote opened on some line is never closed (truncated input).
 */
export async function* readCsvRecords(
  input: AsyncIterable<Buffer | string>,
  fileName: string,
): AsyncGenerator<CsvRecord[]> {
  let open: string[] = [];
  let openLine = 0;
  let openQuotes = 0;
  for await (const batch of readLines(input, fileName)) {
    const out: CsvRecord[] = [];
    for (let i = 0; i < batch.lines.length; i++) {
      const text = batch.lines[i] as string;
      const quotes = countQuotes(text);
      if (open.length > 0) {
        open.push(text);
        openQuotes += quotes;
        if (openQuotes % 2 === 0) {
          const raw = open.join('\n');
          out.push({ fields: splitCsvLine(raw), raw, line: openLine });
          open = [];
        } else if (open.length > MAX_RECORD_LINES) {
          throw new UnreadableInput(
            fileName,
            openLine,
            `a quoted field opened on this line is not closed within ${MAX_RECORD_LINES} lines`,
          );
        }
        continue;
      }
      if (quotes % 2 === 1) {
        open = [text];
        openLine = batch.first + i;
        openQuotes = quotes;
        continue;
      }
      if (isBlank(text)) continue;
      out.push({ fields: splitCsvLine(text), raw: text, line: batch.first + i });
    }
    if (out.length > 0) yield out;
  }
  if (open.length > 0) {
    throw new UnreadableInput(
      fileName,
      openLine,
      'a quoted field opened on this line is never closed (truncated input?)',
    );
  }
}

function countQuotes(text: string): number {
  let n = 0;
  for (let i = text.indexOf('"'); i !== -1; i = text.indexOf('"', i + 1)) n++;
  return n;
}
