/**
 * One RFC 4180 field of the CSV files people open in spreadsheets (`recon report --csv`, the
 * workbench's export). Text that a spreadsheet would run as a formula (a leading = + - @, tab or
 * carriage return) gets a leading quote; a whole number such as -500 (money in cents, which pg
 * hands over as text for bigint) stays a number. Objects are written as JSON.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  const safe = /^[=+\-@\t\r]/.test(text) && !/^-?\d+$/.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}
