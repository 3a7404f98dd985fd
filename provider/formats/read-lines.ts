import { StringDecoder } from 'node:string_decoder';
import { UnreadableInput } from '../../domain/errors.ts';

/** A run of consecutive lines: `lines[i]` is line `first + i` (1-based), without its `\n` or `\r\n`. */
export interface LineBatch {
  readonly first: number;
  readonly lines: readonly string[];
}

/** Longest line accepted; a longer one means the input is not line-oriented text (memory stays bounded). */
export const MAX_LINE_CHARS = 16 * 1024 * 1024;

/**
 * Splits a byte stream into lines, one batch per chunk read, so that the per-line cost is a plain
 * loop rather than an await. UTF-8 is decoded across chunk boundaries; a UTF-8 byte-order mark is
 * dropped; CRLF and LF both end a line; a last line without a final newline is still a line. Empty
 * lines are included (callers decide what an empty line means). Memory is one chunk plus one line.
 * @throws UnreadableInput when a line exceeds {@link MAX_LINE_CHARS}.
 */
export async function* readLines(
  input: AsyncIterable<Buffer | string>,
  fileName: string,
): AsyncGenerator<LineBatch> {
  const decoder = new StringDecoder('utf8');
  let carry = '';
  let next = 1;
  let first = true;
  for await (const chunk of input) {
    let text = carry + (typeof chunk === 'string' ? chunk : decoder.write(chunk));
    if (first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    const lines = text.split('\n');
    carry = lines.pop() as string;
    if (carry.length > MAX_LINE_CHARS) {
      throw new UnreadableInput(
        fileName,
        next + lines.length,
        `line is longer than ${MAX_LINE_CHARS} characters`,
      );
    }
    if (lines.length === 0) continue;
    stripCarriageReturns(lines);
    yield { first: next, lines };
    next += lines.length;
  }
  let rest = carry + decoder.end();
  if (first && rest.charCodeAt(0) === 0xfeff) rest = rest.slice(1);
  if (rest.length > 0) {
    const lines = rest.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    stripCarriageReturns(lines);
    yield { first: next, lines };
  }
}

function stripCarriageReturns(lines: string[]): void {
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.charCodeAt(line.length - 1) === 13) lines[i] = line.slice(0, -1);
  }
}

/** Whether a line holds nothing but spaces and tabs (such lines carry no record). */
export function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c !== 32 && c !== 9) return false;
  }
  return true;
}

/**
 * Splits one CSV line on commas. The legacy format has no quoting (docs/provider-interface.md 4.4), so the fast path is a
 * plain split; a line that does contain a double quote is read with RFC 4180 quoting (`"a,b"`, `""`),
 * so that a quoted comma in a free-text field does not shift the columns.
 * @returns the fields, or null when a quote is unbalanced.
 */
export function splitCsvLine(line: string): string[] | null {
  if (line.indexOf('"') === -1) return line.split(',');
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (line[i] === '"') {
      let value = '';
      i++;
      for (;;) {
        const close = line.indexOf('"', i);
        if (close === -1) return null;
        value += line.slice(i, close);
        if (line[close + 1] === '"') {
          value += '"';
          i = close + 2;
          continue;
        }
        i = close + 1;
        break;
      }
      if (i < line.length && line[i] !== ',') return null;
      fields.push(value);
    } else {
      const comma = line.indexOf(',', i);
      const end = comma === -1 ? line.length : comma;
      const value = line.slice(i, end);
      if (value.includes('"')) return null;
      fields.push(value);
      i = end;
    }
    if (i >= line.length) return fields;
    i++; // the comma
    if (i === line.length) {
      fields.push('');
      return fields;
    }
  }
}
