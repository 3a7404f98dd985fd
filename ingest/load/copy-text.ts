/**
 * Encoding of values for PostgreSQL `COPY ... FROM STDIN` in text format: tab-separated, `\N` for
 * null, backslash escapes for backslash, tab, newline and carriage return. PostgreSQL text cannot hold
 * NUL, so a NUL character (which only a broken file carries) becomes U+FFFD rather than failing the
 * whole COPY.
 */
const NEEDS_ESCAPE = /[\\\t\n\r\0]/;
const ESCAPE_ALL = /[\\\t\n\r\0]/g;
const ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
  '\0': '\uFFFD',
};
const escapeChar = (ch: string) => ESCAPES[ch]!;

export function copyValue(value: unknown): string {
  // Strings first: they are most values, and this runs for every column of every row.
  if (typeof value === 'string')
    return NEEDS_ESCAPE.test(value) ? value.replace(ESCAPE_ALL, escapeChar) : value;
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`${value} is not a safe integer`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 't' : 'f';
  return copyValue(JSON.stringify(value));
}

/** One COPY text line (with its newline): two leading integers, then the named fields of `record`. */
export function copyRecordLine(
  seq: number,
  line: number,
  record: Readonly<Record<string, unknown>>,
  columns: readonly string[],
): string {
  return `${seq}\t${line}\t${copyFields(record, columns)}\n`;
}

/**
 * The named fields of `record` as COPY text, tab-separated, without a newline. A column outside
 * `only` (when given) is written as null.
 */
export function copyFields(
  record: Readonly<Record<string, unknown>>,
  columns: readonly string[],
  only?: ReadonlySet<string>,
): string {
  return copyValues(record, columns, only).join('\t');
}

/** The named fields of `record` as COPY text, one string a column; a column outside `only` (when given) as null. */
export function copyValues(
  record: Readonly<Record<string, unknown>>,
  columns: readonly string[],
  only?: ReadonlySet<string>,
): string[] {
  const out = new Array<string>(columns.length);
  for (let i = 0; i < columns.length; i++) {
    const c = columns[i]!;
    out[i] = only === undefined || only.has(c) ? copyValue(record[c]) : '\\N';
  }
  return out;
}

/** Bytes of each buffer that {@link CopyBuffers} fills. */
const BUFFER_BYTES = 64 * 1024;

/**
 * COPY text rows encoded as UTF-8 into buffers of about {@link BUFFER_BYTES} as each row is made, every
 * row whole in one buffer (a buffer ends with a row's newline). Concatenating the rows into a string
 * and encoding it once it was long cost more: the long string is flattened, then encoded again
 * (docs/benchmark-record.md §3, "The loader against a bare `\copy`").
 */
export class CopyBuffers {
  private written: Buffer[] = [];
  private current: Buffer | null = null;
  private used = 0;

  /** Appends one row (with its newline). */
  write(row: string): void {
    // A UTF-16 code unit takes at most 3 bytes of UTF-8.
    const most = row.length * 3;
    if (this.current === null || this.used + most > this.current.length) this.next(most);
    this.used += this.current!.write(row, this.used);
  }

  /** The buffers written so far, and an empty start. */
  take(): Buffer[] {
    if (this.current !== null && this.used > 0) this.written.push(this.current.subarray(0, this.used));
    const taken = this.written;
    this.written = [];
    this.current = null;
    this.used = 0;
    return taken;
  }

  private next(most: number): void {
    if (this.current !== null && this.used > 0) this.written.push(this.current.subarray(0, this.used));
    this.current = Buffer.allocUnsafe(Math.max(BUFFER_BYTES, most));
    this.used = 0;
  }
}

const ESCAPED = /\\(.)/g;
const UNESCAPES: Record<string, string> = { '\\': '\\', t: '\t', n: '\n', r: '\r' };

/** The text of one field as {@link copyValue} wrote it (never `\\N`): its escapes undone. */
export function copyTextValue(field: string): string {
  return field.includes('\\') ? field.replace(ESCAPED, (_, ch: string) => UNESCAPES[ch] ?? ch) : field;
}

/** One COPY text line (with its newline) from values in column order. */
export function copyLine(values: readonly unknown[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) line += '\t';
    line += copyValue(values[i]);
  }
  return `${line}\n`;
}
