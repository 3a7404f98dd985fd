/**
 * Encoding of values for PostgreSQL `COPY ... FROM STDIN` in text format: tab-separated, `\N` for
 * null, backslash escapes for backslash, tab, newline and carriage return. PostgreSQL text cannot hold
 * NUL, so a NUL character (which only a broken file carries) becomes U+FFFD rather than failing the
 * whole COPY.
 */
const NEEDS_ESCAPE = /[\\\t\n\r\0]/;
const ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
  '\0': '\uFFFD',
};

export function copyValue(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`${value} is not a safe integer`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 't' : 'f';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return NEEDS_ESCAPE.test(text) ? text.replace(/[\\\t\n\r\0]/g, (ch) => ESCAPES[ch]!) : text;
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
