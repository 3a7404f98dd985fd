/**
 * The tolerances as the workbench shows them: per account of the caller's scope, the version in force
 * with its figures per currency and every version before it (reconcile/tolerances/, the same reads as
 * `recon tolerances list` and `history`). An account that never had tolerances matches exactly.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { AccountScope } from '../../reconcile/discrepancies/filter.ts';
import { loadTolerances, toleranceHistory, type Tolerance } from '../../reconcile/tolerances/index.ts';

export interface AccountTolerances {
  readonly account: string;
  /** 0: never set, exact matching. */
  readonly version: number;
  readonly currencies: readonly (Tolerance & { readonly currency: string })[];
  readonly history: readonly {
    version: number;
    currency: string;
    amount_tolerance_cents: number;
    date_lag_business_days: number;
    write_off_limit_cents: number;
    set_by: string;
    set_at: string;
    note: string | null;
    settings_id: number | null;
  }[];
}

/**
 * The accounts of `scope` (of `account` only, when given) that have tolerances or data, with theirs.
 * Accounts come from the tolerances and the reconcile runs, so an account still exact shows too.
 */
export async function tolerancesInScope(
  db: Db,
  scope: AccountScope,
  account?: string,
): Promise<AccountTolerances[]> {
  const names = await sql<{ account: string }>`
    select account from (
      select distinct account from matching_tolerances
      union select distinct account from reconcile_runs
    ) a
    where (${account ?? null}::text is null or account = ${account ?? null}::text)
      ${scope === 'all' ? sql`` : sql`and account = any(${[...scope]}::text[])`}
    order by account`.execute(db);
  const out: AccountTolerances[] = [];
  for (const { account: name } of names.rows) {
    const now = await loadTolerances(db, name);
    const history = await toleranceHistory(db, name);
    out.push({
      account: name,
      version: now.version,
      currencies: now.currencies,
      history: history.map((h) => ({
        version: Number(h.version),
        currency: h.currency,
        amount_tolerance_cents: Number(h.amount_tolerance_cents),
        date_lag_business_days: h.date_lag_business_days,
        write_off_limit_cents: Number(h.write_off_limit_cents),
        set_by: h.set_by,
        set_at: new Date(h.set_at).toISOString(),
        note: h.note,
        settings_id: h.settings_id === null ? null : Number(h.settings_id),
      })),
    });
  }
  return out;
}
