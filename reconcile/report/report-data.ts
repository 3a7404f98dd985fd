import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/database.ts';

/** Everything the text, HTML and CSV reports show for a range of Eastern business dates. */
export interface ReportData {
  readonly from: string;
  readonly to: string;
  /** Successful provider transactions per day and type. */
  readonly volumes: { day: string; type: string; count: number; cents: number }[];
  /** Unresolved discrepancies by kind. */
  readonly byKind: { kind: string; count: number; cents: number }[];
  /** Unresolved discrepancies per day and kind. */
  readonly byDay: { day: string; kind: string; count: number; cents: number }[];
  /** Returns of the range by return code. */
  readonly returnsByCode: { code: string; count: number; cents: number }[];
  /** Every discrepancy of the range (resolved ones included), for the CSV export and the detail table. */
  readonly discrepancies: DiscrepancyRow[];
}

export interface DiscrepancyRow {
  discrepancy_id: number;
  kind: string;
  rule: string;
  status: string;
  business_date: string;
  transaction_id: string | null;
  merchant_transaction_id: string | null;
  return_transaction_id: string | null;
  currency: string | null;
  expected_amount_cents: number | null;
  actual_amount_cents: number | null;
  difference_cents: number | null;
  expected: unknown;
  actual: unknown;
  first_seen_at: string;
  resolved_at: string | null;
  acknowledged_by: string | null;
  note: string | null;
}

/**
 * The money a discrepancy is about: for a disagreement on the amount (or fee) the difference; for a
 * currency, type or status disagreement, or a missing item, the whole amount.
 */
const CENTS = sql`case when kind in ('currency_mismatch','type_mismatch','status_mismatch')
    then abs(coalesce(expected_amount_cents, actual_amount_cents, 0))
    else abs(coalesce(difference_cents, expected_amount_cents, actual_amount_cents, 0)) end`;

export async function loadReportData(
  db: Kysely<Database>,
  range: { from: string; to: string },
): Promise<ReportData> {
  const { from, to } = range;
  const volumes = await sql<{ day: string; type: string; count: number; cents: number }>`
    select transaction_on::text as day, coalesce(transaction_type, '?') as type, count(*)::int as count,
      sum(amount_cents)::bigint as cents
    from provider_transactions where transaction_on between ${from}::date and ${to}::date and status = 'SUCCESSFUL'
    group by 1, 2 order by 1, 2`.execute(db);
  const byKind = await sql<{ kind: string; count: number; cents: number }>`
    select kind, count(*)::int as count, sum(${CENTS})::bigint as cents from discrepancies
    where business_date between ${from}::date and ${to}::date and resolved_at is null
    group by kind order by count(*) desc, kind`.execute(db);
  const byDay = await sql<{ day: string; kind: string; count: number; cents: number }>`
    select business_date::text as day, kind, count(*)::int as count, sum(${CENTS})::bigint as cents from discrepancies
    where business_date between ${from}::date and ${to}::date and resolved_at is null
    group by 1, 2 order by 1, 2`.execute(db);
  const returnsByCode = await sql<{ code: string; count: number; cents: number }>`
    select coalesce(return_code, '(none)') as code, count(*)::int as count, sum(amount_cents)::bigint as cents
    from provider_returns where returned_on between ${from}::date and ${to}::date
    group by 1 order by count(*) desc, 1`.execute(db);
  const discrepancies = await db
    .selectFrom('discrepancies')
    .select([
      'discrepancy_id',
      'kind',
      'rule',
      'status',
      sql<string>`business_date::text`.as('business_date'),
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
    ])
    .where('business_date', '>=', from)
    .where('business_date', '<=', to)
    .orderBy('business_date')
    .orderBy('kind')
    .orderBy('discrepancy_id')
    .execute();
  return {
    from,
    to,
    volumes: volumes.rows,
    byKind: byKind.rows,
    byDay: byDay.rows,
    returnsByCode: returnsByCode.rows,
    discrepancies: discrepancies as DiscrepancyRow[],
  };
}
