/**
 * The columns discrepancies are shown and exported with: the workbench's worklist item, and the one
 * CSV that the workbench and the report (`recon report --csv`) both write.
 */
import { csvField } from '../../domain/csv-field.ts';
import { centsToDecimal } from '../../domain/money.ts';
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

/** An amount in cents shown as a decimal of its row's currency (`1234.56`). */
function decimal(
  key: 'expected_amount_cents' | 'actual_amount_cents' | 'difference_cents' | 'stake_cents',
  header: string,
): CsvColumn {
  return { header, value: (row) => centsToDecimal(row[key]) };
}

/**
 * The one CSV of discrepancies: the workbench's export (`/api/discrepancies.csv`, in worklist order)
 * and `recon report --csv` (by business date) write these columns, under these names. Amounts are
 * shown twice: in decimal beside their currency, for people and spreadsheets, and as integer cents
 * (`*_cents`) for machines. The transaction id stays the 11th column; `expected` and `actual` (JSON,
 * with commas inside) and the account come last, so that the columns before them split simply.
 */
export const DISCREPANCY_CSV_COLUMNS: readonly CsvColumn[] = [
  column('discrepancy_id'),
  column('kind'),
  column('rule'),
  column('status'),
  column('business_date'),
  column('currency'),
  decimal('expected_amount_cents', 'expected_amount'),
  decimal('actual_amount_cents', 'actual_amount'),
  decimal('difference_cents', 'difference'),
  decimal('stake_cents', 'at_stake'),
  ...(
    [
      'transaction_id',
      'merchant_transaction_id',
      'return_transaction_id',
      'assignee',
      'first_seen_at',
      'acknowledged_by',
      'note',
      'resolved_at',
      'resolution',
      'expected_amount_cents',
      'actual_amount_cents',
      'difference_cents',
      'stake_cents',
      'expected',
      'actual',
      'account',
    ] as const
  ).map((k) => column(k)),
];

/** The header line of a CSV of these columns (CRLF-terminated). */
export function csvHeader(columns: readonly CsvColumn[]): string {
  return `${columns.map((c) => c.header).join(',')}\r\n`;
}

/** One row as a CSV line of these columns (CRLF-terminated). */
export function csvLine(columns: readonly CsvColumn[], row: DiscrepancyRow): string {
  return `${columns.map((c) => csvField(c.value(row))).join(',')}\r\n`;
}
