import type { DiscrepancyRow } from './report-data.ts';

const COLUMNS: (keyof DiscrepancyRow)[] = [
  'discrepancy_id',
  'account',
  'kind',
  'rule',
  'status',
  'business_date',
  'transaction_id',
  'merchant_transaction_id',
  'return_transaction_id',
  'currency',
  'expected_amount_cents',
  'actual_amount_cents',
  'difference_cents',
  'expected',
  'actual',
  'first_seen_at',
  'resolved_at',
  'acknowledged_by',
  'note',
];

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  // RFC 4180 quoting; a leading = + - @ is prefixed so that spreadsheets do not run it as a formula.
  const safe = /^[=+\-@]/.test(text) && !/^-?\d+$/.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** The discrepancies as CSV (header row, amounts in integer cents, expected/actual as JSON). */
export function discrepanciesCsv(rows: DiscrepancyRow[]): string {
  return (
    [COLUMNS.join(','), ...rows.map((r) => COLUMNS.map((c) => cell(r[c])).join(','))].join('\r\n') + '\r\n'
  );
}
