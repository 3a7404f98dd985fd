import { csvHeader, csvLine, REPORT_CSV_COLUMNS } from '../discrepancies/columns.ts';
import type { DiscrepancyRow } from '../discrepancies/row.ts';

/** The discrepancies as CSV (header row, amounts in integer cents, expected/actual as JSON). */
export function discrepanciesCsv(rows: readonly DiscrepancyRow[]): string {
  return csvHeader(REPORT_CSV_COLUMNS) + rows.map((r) => csvLine(REPORT_CSV_COLUMNS, r)).join('');
}
