/**
 * The columns discrepancies are shown and exported with: the workbench's worklist item and CSV, and
 * the report's CSV (`recon report --csv`). Amounts are integer cents of the `currency` beside them.
 */
import { csvField } from '../../domain/csv-field.ts';
import type { DiscrepancyRow } from './row.ts';

/** A discrepancy as the workbench's API lists it (schema WorklistItem): the row, its id as `id`. */
export type WorklistItem = DiscrepancyRow & { id: number };

export function worklistItem(row: DiscrepancyRow): WorklistItem {
  return { id: row.discrepancy_id, ...row };
}

/** A CSV column: its header and how a row gives its value. */
export interface CsvColumn {
  readonly header: string;
  readonly value: (row: DiscrepancyRow) => unknown;
}

function column(key: keyof DiscrepancyRow, header: string = key): CsvColumn {
  return { header, value: (row) => row[key] };
}

/** The workbench's export (`/api/discrepancies.csv`), in worklist order. */
export const WORKBENCH_CSV_COLUMNS: readonly CsvColumn[] = [
  column('discrepancy_id', 'id'),
  ...(
    [
      'kind',
      'rule',
      'status',
      'business_date',
      'currency',
      'expected_amount_cents',
      'actual_amount_cents',
      'difference_cents',
      'stake_cents',
      'transaction_id',
      'merchant_transaction_id',
      'return_transaction_id',
      'assignee',
      'first_seen_at',
      'acknowledged_by',
      'resolution',
      // Last, so that the positions of the columns before it stay those spreadsheets already read.
      'account',
    ] as const
  ).map((k) => column(k)),
];

/** The report's export (`recon report --csv`): expected and actual as JSON. */
export const REPORT_CSV_COLUMNS: readonly CsvColumn[] = (
  [
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
  ] as const
).map((k) => column(k));

/** The header line of a CSV of these columns (CRLF-terminated). */
export function csvHeader(columns: readonly CsvColumn[]): string {
  return `${columns.map((c) => c.header).join(',')}\r\n`;
}

/** One row as a CSV line of these columns (CRLF-terminated). */
export function csvLine(columns: readonly CsvColumn[], row: DiscrepancyRow): string {
  return `${columns.map((c) => csvField(c.value(row))).join(',')}\r\n`;
}
