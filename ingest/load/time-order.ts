/**
 * Time order, not arrival order (docs/finance.md "Time order"): a provider transaction whose stored
 * status is final never goes back to PENDING through a load. The provider's statuses only move from
 * PENDING to a final one, so a load that says PENDING for a row the warehouse knows as final carries
 * an older picture (an older file imported after a newer one): its change is refused, the row keeps
 * its values, and the version the load carried is kept in row_history with `refused` set and the
 * load's id, once per distinct version (re-importing the same older file adds nothing).
 */

/** Statuses after which a transaction's story has ended at the provider (the canonical statuses of docs/data-dictionary.md). */
export const FINAL_STATUSES = `('SUCCESSFUL','REJECTED','FAILED','RETURNED')`;

/** The stored row `t` is final and the staged row `s` would make it PENDING again. */
export const GOES_BACK = `(coalesce(t.status in ${FINAL_STATUSES}, false) and s.status is not distinct from 'PENDING')`;

/** The merge's guard: a staged row replaces a stored one only when it does not go back in time. */
export const TIME_ORDER_GUARD = `not ${GOES_BACK}`;

/**
 * The CTE that keeps the refused versions: `srcCte` the staged rows, `stored` the join to the stored
 * row `t` (merge-staging.ts), `changed` the changed-columns expression, `distinct` the comparison.
 */
export function refusedHistoryCte(p: {
  readonly name: string;
  readonly table: string;
  readonly key: string;
  readonly srcCte: string;
  readonly stored: string;
  readonly changed: string;
  readonly distinct: string;
  readonly loadId: number;
}): string {
  const carried = `(to_jsonb(s) - 'seq')`;
  return `${p.name} as (
  insert into row_history (table_name, row_key, previous, changed_columns, load_id, account, refused)
  select '${p.table}', s.${p.key}::text, ${carried}, ${p.changed}, ${p.loadId}, s.account, true
  from ${p.srcCte} s join ${p.stored}
  where ${GOES_BACK} and ${p.distinct}
    and not exists (select 1 from row_history h where h.table_name = '${p.table}' and h.row_key = s.${p.key}::text
      and h.refused and h.account = s.account and h.previous = ${carried})
  returning 1
)`;
}
