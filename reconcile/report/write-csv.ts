import { csvField } from '../../domain/csv-field.ts';
import type { DiscrepancyRow } from './report-data.ts';

const COLUMNS: (keyof DiscrepancyRow)[] = [
  'discrepancy_id',
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
  // Last, as in the workbench's export: the columns before it keep the positions spreadsheets read.
  'account',
];

/** The discrepancies as CSV (header row, amounts in integer cents, expected/actual as JSON). */
export function discrepanciesCsv(rows: DiscrepancyRow[]): string {
  return (
    [COLUMNS.join(','), ...rows.map((r) => COLUMNS.map((c) => csvField(r[c])).join(','))].join('\r\n') +
    '\r\n'
  );
}
