/**
 * The discrepancy as every reader sees it: the terminal worklist, the report (text, JSON, HTML, CSV)
 * and the workbench read the same row, selected by the same column list. This folder owns the
 * discrepancy: its row, filter, orders, columns and actions (docs/architecture.md).
 */
import { sql } from 'kysely';
import { typedError } from '../../domain/errors.ts';

/** One discrepancy: what is wrong, with what money, and what people did about it. */
export interface DiscrepancyRow {
  discrepancy_id: number;
  /** The provider account the discrepancy belongs to. */
  account: string;
  kind: string;
  rule: string;
  status: string;
  /** The Eastern business date (YYYY-MM-DD), null when no side carries one. */
  business_date: string | null;
  transaction_id: string | null;
  merchant_transaction_id: string | null;
  return_transaction_id: string | null;
  currency: string | null;
  expected_amount_cents: number | null;
  actual_amount_cents: number | null;
  difference_cents: number | null;
  /** Money at stake in cents of `currency`: what the worklist orders by and the totals sum. */
  stake_cents: number;
  expected: unknown;
  actual: unknown;
  first_seen_at: string;
  last_seen_at: string;
  resolved_at: string | null;
  resolution: string | null;
  acknowledged_at: string | null;
  acknowledged_by: string | null;
  note: string | null;
  assignee: string | null;
}

/** The select list of a {@link DiscrepancyRow}: written once for every reader. */
export const ROW_COLUMNS = sql`discrepancy_id, account, kind, rule, status, business_date, transaction_id,
  merchant_transaction_id, return_transaction_id, currency, expected_amount_cents, actual_amount_cents,
  difference_cents, stake_cents, expected, actual, first_seen_at, last_seen_at, resolved_at, resolution,
  acknowledged_at, acknowledged_by, note, assignee`;

/** No discrepancy has this id (or none the caller may see). */
export class DiscrepancyNotFound extends typedError<{ readonly discrepancyId: number }>('final') {
  constructor(discrepancyId: number) {
    super(`discrepancy ${discrepancyId} does not exist: check the id with recon discrepancies list`, {
      discrepancyId,
    });
  }
}
