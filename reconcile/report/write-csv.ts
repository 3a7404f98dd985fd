import { csvHeader, csvLine, DISCREPANCY_CSV_COLUMNS } from '../discrepancies/columns.ts';
import type { DiscrepancyRow } from '../discrepancies/row.ts';

/** The discrepancies as CSV: the columns of the workbench's export (columns.ts), one row each. */
export function discrepanciesCsv(rows: readonly DiscrepancyRow[]): string {
  return csvHeader(DISCREPANCY_CSV_COLUMNS) + rows.map((r) => csvLine(DISCREPANCY_CSV_COLUMNS, r)).join('');
}
