/**
 * The provider scorecard as the workbench shows it: the analyst view provider_scorecard (migration
 * 0021; docs/analysts.md) for a range of Eastern days, of one account or all.
 */
import type { AccountScope } from '../../reconcile/discrepancies/filter.ts';
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';

export interface ScorecardRow {
  account: string;
  source: string;
  business_date: string;
  rows: number;
  first_covering_load_id: number | null;
  first_covered_at: string | null;
  first_load_id: number | null;
  first_loaded_at: string | null;
  arrival_delay_seconds: number | null;
  notification_delay_p50_seconds: number | null;
  notification_delay_p95_seconds: number | null;
  sibling_source: string | null;
  rows_not_in_sibling: number | null;
  rows_not_notified: number | null;
}

/**
 * Rows of provider_scorecard for Eastern days `from`..`to`, newest day first: of `account` when
 * given, and only of the accounts of the caller's scope (workbench/account-scope.ts).
 */
export async function scorecard(
  db: Db,
  req: { from: string; to: string; account?: string | undefined },
  accounts: AccountScope,
): Promise<ScorecardRow[]> {
  const result = await sql<ScorecardRow>`select account, source, business_date::text as business_date, rows,
      first_covering_load_id, first_covered_at, first_load_id, first_loaded_at, arrival_delay_seconds,
      notification_delay_p50_seconds, notification_delay_p95_seconds, sibling_source, rows_not_in_sibling,
      rows_not_notified
    from provider_scorecard
    where business_date between ${req.from}::date and ${req.to}::date
      ${req.account === undefined ? sql`` : sql`and account = ${req.account}`}
      ${accounts === 'all' ? sql`` : sql`and account = any(${[...accounts]}::text[])`}
    order by business_date desc, account, source`.execute(db);
  return result.rows;
}
