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
  let out = '';
  for (let i = 0; i < columns.length; i++) {
    const c = columns[i]!;
    if (i > 0) out += '\t';
    out += only === undefined || only.has(c) ? copyValue(record[c]) : '\\N';
  }
  return out;
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
