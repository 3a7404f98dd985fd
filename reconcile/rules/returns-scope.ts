import { sql } from 'kysely';
import { exec, type RuleContext } from './statement.ts';
import { analyzeWorkTables, createWorkTable } from './work-tables.ts';

/**
 * The scope tables of the rules about return notifications, representments, adjustments and the
 * roll-forward, which start from rows that scope_p, scope_l and scope_r do not hold (a notification
 * no report lists, a return by its next action date, an adjustment, a day): a full run takes every
 * such row of the range, a run over changed keys (ctx.scoped) those the keys reach. Each is the set
 * of ids a rule's discrepancies name (its anchor, reconcile/rules/rule.ts), so that the lifecycle
 * resolves only what the run looked at.
 *
 * - scope_n: return notifications received on the range's Eastern dates, with the transaction id
 *   each names (return_not_reported).
 * - scope_x: returns whose next action date is in the range (representment_missed).
 * - scope_a: provider transaction ids of the range's adjustments, and scope_adj the adjustments of
 *   the range looked at: those of scope_a's transactions and those without one, which every run looks
 *   at (no key tells their change) (adjustment_not_booked).
 * - scope_days: the days of the roll-forward (settlement_unexplained): every day of the range in a
 *   full run; in a run over changed keys the days whose items can have changed (fillRollForwardDays),
 *   to which the roll-forward adds the days of the discrepancies the run found or looked at
 *   (reconcile/rules/settlement.ts).
 * - redebits: the provider rows of the ranked duplicate groups (scope.ts) that debit a payment again
 *   after the return of another row of their merchant transaction id (duplicate_merchant_transaction
 *   leaves them out). One set-based join of the groups with their returns: a probe per row of the
 *   range, as the rule's condition, was a nested loop over the duplicates (458 s of one run over a
 *   range with 22,000 duplicates).
 * Filled after scope_p, scope_l, scope_r and the ranked duplicate groups.
 */
export async function fillReturnsScope(ctx: RuleContext): Promise<void> {
  const { from, to } = ctx;
  const received = sql`n.kind = 'return'
    and n.received_at >= (${from}::date)::timestamp at time zone 'America/Toronto'
    and n.received_at < (${to}::date + 1)::timestamp at time zone 'America/Toronto'`;
  const nextAction = sql`r.next_action_date between ${from}::date and ${to}::date`;
  const adjusted = sql`a.adjusted_on between ${from}::date and ${to}::date`;
  if (!ctx.scoped) {
    await exec(
      ctx,
      sql`create temp table scope_n on commit drop as select n.notification_id, n.transaction_id from notifications n where ${received}`,
    );
    await exec(
      ctx,
      sql`create temp table scope_x on commit drop as select r.return_transaction_id from provider_returns r where ${nextAction}`,
    );
    await exec(
      ctx,
      sql`create temp table scope_a on commit drop as
        select distinct a.transaction_id from provider_adjustments a where ${adjusted} and a.transaction_id is not null`,
    );
  } else {
    await fillChangedReturnsScope(ctx, received, nextAction, adjusted);
  }
  await exec(
    ctx,
    sql`create temp table scope_adj on commit drop as select a.adjustment_key, a.adjusted_on from provider_adjustments a
      where ${adjusted} and (a.transaction_id in (select transaction_id from scope_a) or a.transaction_id is null)`,
  );
  // A work table (work-tables.ts): the suspects' condition asks it, and a temporary table there kept
  // that scan of every fact on one core.
  await createWorkTable(
    ctx,
    'redebits',
    sql`select distinct p.transaction_id from ranked p
      join ranked o on o.mtid = p.mtid and o.transaction_id <> p.transaction_id
      join provider_returns r on r.original_transaction_id = o.transaction_id
      join provider_transactions pp on pp.transaction_id = p.transaction_id
      where r.returned_on <= pp.transaction_on`,
  );
  await fillRollForwardDays(ctx);
  await exec(ctx, sql`analyze scope_n, scope_x, scope_a, scope_adj, scope_days`);
  await analyzeWorkTables(ctx, 'redebits');
}

type Term = ReturnType<typeof sql>;

async function fillChangedReturnsScope(ctx: RuleContext, received: Term, nextAction: Term, adjusted: Term) {
  const flagged = (date: string) => sql.raw(`${date} in (select business_date from flagged_days)`);
  // A notification names a return by its own id or its original's: a change of either, or of the
  // return (scope_r), reaches it.
  await exec(
    ctx,
    sql`create temp table scope_n on commit drop as
      select n.notification_id, n.transaction_id from notifications n
      where ${received} and (n.transaction_id in (select key from changed_r union select key from changed_t
          union select return_transaction_id from scope_r
          union select r.original_transaction_id from scope_r join provider_returns r using (return_transaction_id))
        or ${flagged(`(n.received_at at time zone 'America/Toronto')::date`)})`,
  );
  // Every notification of the range naming a transaction id of the scope: return_not_reported takes
  // the first of them (return-notifications.ts), which a flagged day's alone may not hold.
  await exec(
    ctx,
    sql`insert into scope_n (notification_id, transaction_id)
      select n.notification_id, n.transaction_id from notifications n
      where ${received} and n.transaction_id in (select transaction_id from scope_n)
      except select notification_id, transaction_id from scope_n`,
  );
  // A representment is judged from its return, its notification or status lookup (by the return's id
  // or its original's) and the re-debit (by the merchant transaction id).
  await exec(
    ctx,
    sql`create temp table scope_x on commit drop as
      select r.return_transaction_id from provider_returns r
      left join provider_transactions o on o.transaction_id = r.original_transaction_id
      where ${nextAction} and (r.return_transaction_id in (select key from changed_r union select key from changed_t)
        or r.original_transaction_id in (select key from changed_t union select key from changed_r)
        or coalesce(r.merchant_transaction_id, o.merchant_transaction_id) in (select key from changed_m)
        or ${flagged('r.next_action_date')})`,
  );
  await exec(
    ctx,
    sql`create temp table scope_a on commit drop as
      select distinct a.transaction_id from provider_adjustments a
      where ${adjusted} and (a.transaction_id in (select key from changed_t) or ${flagged('a.adjusted_on')})`,
  );
}

/**
 * The days of the roll-forward. A full run: every day of the range. A run over changed keys: the days
 * of the items it looks at (scope_p, scope_l, scope_r, scope_adj: the days they count on now), the
 * days of the rows written since its dates were last matched, before and after (changed_days: an item
 * that left a day, a deleted row), and the dates it looks at whole (flagged_days). A ledger entry
 * paired with a provider row counts on that row's day: the row is in scope_p whenever the entry is in
 * scope_l (changed-scope.ts closes the scope over the merchant transaction id). A ledger REPRESENTMENT
 * entry counts on the day of the re-debit its transaction id names while that row is SUCCESSFUL, on
 * its own booking date otherwise (settlement_items, migration 0029): a write to the provider row alone
 * moves it, so the booking dates of the entries naming a changed transaction id are days of the run
 * too (scope_l holds them only when their own keys changed; test/integration/settlement-representment-days).
 *
 * The scope's provider rows and returns are read by their keys alone (`offset 0` keeps the range's
 * condition out of the scan): with it, the planner could AND the keys' bitmap with the day's
 * block-range index (migration 0042), whose lossy pages test every row of them against every key
 * of the array (not hashed: it is a parameter), 45-57 ms of backend CPU for 1,200 keys among
 * 100,000 history rows against 4-5 ms by the primary key among 1,000,000 (docs/benchmark-record.md
 * §1).
 */
async function fillRollForwardDays(ctx: RuleContext): Promise<void> {
  const { from, to } = ctx;
  if (!ctx.scoped) {
    await exec(
      ctx,
      sql`create temp table scope_days on commit drop as
        select d::date as business_date from generate_series(${from}::date, ${to}::date, interval '1 day') d`,
    );
    return;
  }
  await exec(
    ctx,
    sql`create temp table scope_days on commit drop as
      select business_date from (
        select business_date from flagged_days
        union select business_date from changed_days
        union select booked_on from scope_l
        union select transaction_on from (select p.transaction_on from provider_transactions p
          where p.transaction_id = any (array(select transaction_id from scope_p)) offset 0) p
        union select returned_on from (select r.returned_on from provider_returns r
          where r.return_transaction_id = any (array(select return_transaction_id from scope_r)) offset 0) r
        union select adjusted_on from scope_adj
        union select booked_on from (select (l.booked_at at time zone 'America/Toronto')::date as booked_on
          from merchant_ledger l where l.transaction_type = 'REPRESENTMENT'
            and l.transaction_id = any (array(select key from changed_t)) offset 0) r) d
      where business_date between ${from}::date and ${to}::date`,
  );
}
