/**
 * One RFC 4180 field of the CSV files people open in spreadsheets (`recon report --csv`, the
 * workbench's export). Text that a spreadsheet would run as a formula gets a leading quote: a
 * leading = + - @, tab or carriage return, looked for after what spreadsheets do to a cell first
 * (leading white space dropped, full-width forms such as ＝ read as =: Unicode NFKC). A whole number
 * such as -500 (money in cents, which pg hands over as text for bigint) stays a number. Objects are
 * written as JSON.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  const safe = runsAsFormula(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

function runsAsFormula(text: string): boolean {
  if (/^-?\d+$/.test(text)) return false;
  if (/^[\t\r]/.test(text)) return true;
  return /^[=+\-@]/.test(text.normalize('NFKC').replace(/^[\s\p{Cc}\p{Cf}]+/u, ''));
}
