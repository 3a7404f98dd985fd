/**
 * One discrepancy as its readers show it: the columns the terminal worklist, the report and the
 * report's CSV have in common. Each reader adds the columns only it selects.
 */
export interface DiscrepancyRowFields {
  discrepancy_id: number;
  kind: string;
  status: string;
  transaction_id: string | null;
  merchant_transaction_id: string | null;
  return_transaction_id: string | null;
  currency: string | null;
  expected_amount_cents: number | null;
  actual_amount_cents: number | null;
  difference_cents: number | null;
  first_seen_at: string;
  resolved_at: string | null;
  acknowledged_by: string | null;
  note: string | null;
}
