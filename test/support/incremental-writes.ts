import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import { actOnDiscrepancy, type Resolution } from '../../reconcile/discrepancies/actions.ts';
import { KEPT_COLUMNS } from '../../reconcile/rules/settlement-kept-keys.ts';
import {
  insertLedger,
  insertReturns,
  type ReturnInput,
  insertTransactions,
  storeTestNotification,
} from './recon-rows.ts';
import type { generator } from './seeded-random.ts';

// The random writes of the property test of runs over changed keys (test/integration/reconcile-incremental
// and reconcile-incremental-accounts), what a run decides read back by natural key, and the check of the
// roll-forward's kept items against the view.

export type Random = ReturnType<typeof generator>;

/** A day of the range (or, rarely, just outside it), YYYY-MM-DD. */
const day = (r: Random, outside = 0.05) =>
  r.next() < outside ? '2026-03-20' : `2026-03-${String(2 + r.int(12)).padStart(2, '0')}`;

/** One write, applied the same way to a warehouse. */
export type Write = (
  db: Kysely<Database>,
  load: number,
  returnsLoad: number,
  adjustmentsLoad: number,
  account?: string,
) => Promise<unknown>;

/**
 * A write and what it is. `unscoped`: it opens its own transaction (a person's action) or names its
 * account (a notification), so a test writing an account's rows through the account's views
 * (reconcile/account-scope.ts) runs it beside them, with the account.
 */
export interface RandomWrite {
  what: string;
  write: Write;
  unscoped?: true;
}

const mtid = (r: Random) => `M${r.int(14)}`;
const tid = (r: Random) => `T${r.int(24)}`;
const rid = (r: Random) => `R${r.int(6)}`;

/** A provider return written anew (deleted, then inserted as `ret`). */
function returnWritten(ret: ReturnInput): RandomWrite {
  return {
    what: `return ${JSON.stringify(ret)}`,
    write: async (db, _load, returnsLoad) => {
      await sql`delete from provider_returns where return_transaction_id = ${ret.return_transaction_id}`.execute(
        db,
      );
      await insertReturns(db, returnsLoad, [ret]);
    },
  };
}

export function randomWrite(r: Random, compiler: Kysely<Database>): RandomWrite {
  const t = tid(r);
  const m = mtid(r);
  const choice = r.int(120);
  if (choice >= 100) return returnsLoopWrite(r, choice - 100, t, m);
  if (choice < 20) {
    const row = {
      transaction_id: t,
      merchant_transaction_id: m,
      transaction_on: day(r),
      amount_cents: r.pick([1000, 1000, 2000]),
      status: r.pick(['SUCCESSFUL', 'SUCCESSFUL', 'PENDING', 'REJECTED']),
      notify_status: r.pick(['C', 'S', 'I', null]),
      currency: r.next() < 0.1 ? 'USD' : 'CAD',
      source: r.next() < 0.2 ? ('legacy-transactions' as const) : ('report-transactions' as const),
    };
    return {
      what: `provider ${JSON.stringify(row)}`,
      write: async (db, load) => {
        await sql`delete from provider_transactions where transaction_id = ${t}`.execute(db);
        await insertTransactions(db, load, [{ ...row, raw_status: row.status }]);
      },
    };
  }
  if (choice < 30) {
    const set = r.pick([
      sql`amount_cents = amount_cents + 500`,
      sql`status = 'SUCCESSFUL', raw_status = 'SUCCESSFUL'`,
      sql`merchant_transaction_id = ${m}`,
      sql`transaction_on = ${day(r, 0.3)}`,
      sql`fee_cents = 30`,
    ]);
    return {
      what: `update provider ${t}: ${set.compile(compiler).sql} ${JSON.stringify(set.compile(compiler).parameters)}`,
      write: (db) => sql`update provider_transactions set ${set} where transaction_id = ${t}`.execute(db),
    };
  }
  if (choice < 34)
    return {
      what: `delete provider ${t}`,
      write: (db) => sql`delete from provider_transactions where transaction_id = ${t}`.execute(db),
    };
  if (choice < 50) {
    const entry = {
      merchant_transaction_id: m,
      transaction_type: r.pick(['DEBIT', 'DEBIT', 'CREDIT']),
      amount_cents: r.pick([1000, 1000, 1500]),
      status: r.pick(['SUCCESSFUL', 'SUCCESSFUL', 'REJECTED']),
      booked_at: `${day(r)}T15:00:01Z`,
    };
    return {
      what: `ledger ${JSON.stringify(entry)}`,
      write: async (db) => {
        await sql`delete from merchant_ledger where merchant_transaction_id = ${m}`.execute(db);
        await insertLedger(db, [entry]);
      },
    };
  }
  if (choice < 56) {
    const entry = {
      merchant_transaction_id: `MR${r.int(6)}`,
      transaction_type: 'RETURN',
      transaction_id: r.next() < 0.5 ? rid(r) : null,
      original_merchant_transaction_id: m,
      amount_cents: r.pick([1000, 1200]),
      booked_at: `${day(r)}T16:00:00Z`,
    };
    return {
      what: `ledger return ${JSON.stringify(entry)}`,
      write: async (db) => {
        await sql`delete from merchant_ledger where merchant_transaction_id = ${entry.merchant_transaction_id}`.execute(
          db,
        );
        await insertLedger(db, [entry]);
      },
    };
  }
  if (choice < 60)
    return {
      what: `delete ledger ${m}`,
      write: (db) => sql`delete from merchant_ledger where merchant_transaction_id = ${m}`.execute(db),
    };
  if (choice < 72) {
    const status = r.pick(['SUCCESS', 'SUCCESS', 'FAILED', 'PENDING']);
    const amount = r.pick([1000, 1000, 1001]);
    const at = `2026-03-${String(2 + r.int(14)).padStart(2, '0')}T16:00:00Z`;
    return {
      what: `notification ${t} ${status} ${amount} at ${at}`,
      write: (db, _l, _r, _a, account) =>
        storeTestNotification(
          db,
          t,
          m,
          { transactionStatus: status, transactionAmount: amount },
          at,
          'transaction',
          account,
        ),
      unscoped: true,
    };
  }
  if (choice < 78) {
    const amount = r.pick([1000, 1100]);
    return {
      what: `legacy twin ${t} ${amount}`,
      write: async (db, load) => {
        await sql`delete from legacy_transactions where transaction_id = ${t}`.execute(db);
        await db
          .insertInto('legacy_transactions')
          .values({
            transaction_id: t,
            transaction_on: '2026-03-02',
            raw_transaction_type: 'DEBIT',
            merchant_transaction_id: `M-${t}`,
            amount_cents: amount,
            currency: 'CAD',
            status: 'SUCCESSFUL',
            raw_status: 'SUCCESSFUL',
            query_type: '5',
            load_id: load,
            first_load_id: load,
            raw: 'x',
          })
          .execute();
      },
    };
  }
  if (choice < 88) {
    const ret = {
      return_transaction_id: rid(r),
      original_transaction_id: t,
      merchant_transaction_id: r.next() < 0.5 ? m : null,
      amount_cents: r.pick([1000, 1200]),
      returned_on: day(r),
    };
    return returnWritten(ret);
  }
  if (choice < 91)
    return {
      what: `status lookup ${t}`,
      write: (db) =>
        sql`insert into status_lookups (transaction_id, status, raw_status, looked_up_at)
          values (${t}, 'PENDING', 'PENDING', '2026-03-10T12:00:00Z')`.execute(db),
    };
  if (choice < 93) {
    const fixed = 20 + r.int(10);
    return {
      what: `fee schedule ${fixed}`,
      write: (db) =>
        sql`insert into fee_schedule (product, transaction_type, currency, fixed_cents, basis_points, valid_from)
          values ('IBT', 'DEBIT', 'CAD', ${fixed}::int, 0, '2026-01-01')
          on conflict do nothing`.execute(db),
    };
  }
  const reason = r.pick<Resolution | 'reopen'>(['accepted', 'fixed_in_ledger', 'provider_error', 'reopen']);
  const nth = r.int(1000);
  return { what: `person ${reason} #${nth}`, write: (db) => personActs(db, reason, nth), unscoped: true };
}

/**
 * A write of the returns loop (issue 25, section 3): a return notification naming a return or its
 * original, a return with a next action date and a delivery status, a provider adjustment, a ledger
 * ADJUSTMENT (of a transaction or none) or REPRESENTMENT entry.
 */
function returnsLoopWrite(r: Random, choice: number, t: string, m: string): RandomWrite {
  if (choice < 5) {
    const id = r.next() < 0.5 ? rid(r) : t;
    const over = {
      transactionStatus: r.pick(['RETURNED', 'RETURNED_WITH_REPRESENTMENT']),
      returnCode: '901',
      nextActionDate: day(r),
    };
    const at = `${day(r)}T17:00:00Z`;
    return {
      what: `return notification ${id} ${JSON.stringify(over)} at ${at}`,
      write: (db, _l, _r, _a, account) => storeTestNotification(db, id, m, over, at, 'return', account),
      unscoped: true,
    };
  }
  if (choice < 9) {
    const row = {
      adjustment_key: `A${r.int(6)}#1`,
      transaction_id: r.next() < 0.2 ? null : t,
      adjustment_type: 'A',
      amount_cents: r.pick([-300, 0]),
      fee_cents: r.pick([0, -5]),
      currency: 'CAD',
      adjusted_on: day(r),
    };
    return {
      what: `adjustment ${JSON.stringify(row)}`,
      write: async (db, _load, _returns, load) => {
        await sql`delete from provider_adjustments where adjustment_key = ${row.adjustment_key}`.execute(db);
        await db
          .insertInto('provider_adjustments')
          .values({ ...row, source: 'legacy-adjustments', load_id: load, first_load_id: load, raw: '' })
          .execute();
      },
    };
  }
  const adjustment = choice < 13;
  const entry = adjustment
    ? {
        merchant_transaction_id: `MA${r.int(6)}`,
        transaction_type: 'ADJUSTMENT',
        transaction_id: r.next() < 0.2 ? null : t,
        amount_cents: r.pick([-300, 0]),
        fee_cents: r.pick([0, -5]),
        booked_at: `${day(r)}T17:00:00Z`,
      }
    : choice < 16
      ? {
          merchant_transaction_id: `MP${r.int(4)}`,
          transaction_type: 'REPRESENTMENT',
          transaction_id: t,
          original_merchant_transaction_id: m,
          amount_cents: 1000,
          booked_at: `${day(r)}T17:00:00Z`,
        }
      : null;
  if (entry)
    return {
      what: `ledger ${JSON.stringify(entry)}`,
      write: async (db) => {
        await sql`delete from merchant_ledger where merchant_transaction_id = ${entry.merchant_transaction_id}`.execute(
          db,
        );
        await insertLedger(db, [entry]);
      },
    };
  const ret = {
    return_transaction_id: rid(r),
    original_transaction_id: t,
    merchant_transaction_id: r.next() < 0.5 ? m : null,
    amount_cents: 1000,
    returned_on: day(r),
    next_action_date: day(r),
    notify_status: r.pick(['C', 'S']),
  };
  return returnWritten(ret);
}

/**
 * A person resolves (or reopens) the nth discrepancy that allows it, by account and key, an hour
 * before the run.
 */
async function personActs(db: Kysely<Database>, reason: Resolution | 'reopen', nth: number) {
  const open = reason !== 'reopen';
  const r = await sql<{ discrepancy_id: number }>`select discrepancy_id from discrepancies
    where (resolved_at is null) = ${open} order by account, discrepancy_key`.execute(db);
  if (r.rows.length === 0) return;
  const id = r.rows[nth % r.rows.length]!.discrepancy_id;
  const action =
    reason === 'reopen'
      ? { action: 'reopen' as const, note: 'again' }
      : { action: 'resolve' as const, reason, note: 'n' };
  await actOnDiscrepancy(db, id, action, { name: 'ana', at: person.at });
}
/** When people act: an hour before the round's run (the tests move it round by round). */
export const person = { at: '2026-03-14T11:00:00Z' };

/** Everything a run decides, by account and natural key, without the serial ids and last_seen_at. */
export async function state(db: Kysely<Database>) {
  const q = async (text: string) => (await sql.raw<Record<string, unknown>>(text).execute(db)).rows;
  return {
    discrepancies:
      await q(`select account, discrepancy_key, kind, rule, transaction_id, merchant_transaction_id,
      return_transaction_id, business_date::text, currency, expected, actual, expected_amount_cents,
      actual_amount_cents, difference_cents, candidates, status, resolution, resolved_at::text,
      first_seen_at::text from discrepancies order by account, discrepancy_key`),
    events:
      await q(`select d.account, d.discrepancy_key, e.event, e.details, e.at::text from discrepancy_events e
      join discrepancies d using (discrepancy_id) order by 1, 2, e.at, e.event, e.details::text`),
    transactionMatches: await q(`select account, transaction_id, merchant_transaction_id, rule
      from transaction_matches order by account, transaction_id`),
    notificationMatches:
      await q(`select m.account, n.transaction_id, n.received_at::text, n.status, m.target_id,
      m.first_received_at::text from notification_matches m join notifications n using (notification_id)
      order by 1, 2, 3, 4`),
    returnMatches:
      await q(`select account, return_transaction_id, original_transaction_id, ledger_merchant_transaction_id,
      rule from return_matches order by account, return_transaction_id`),
    sourceMatches: await q(`select account, transaction_id, legacy_transaction_id from source_matches
      order by 1, 2`),
    // The roll-forward per day and currency (migration 0029): what explains each day follows the
    // discrepancies a run over changed keys recomputed for the days it looked at.
    settlement: await q(`select * from daily_settlement_totals order by account, business_date, currency`),
    // The near-miss candidates (reconcile/candidates/changed-candidates.ts in a run over changed keys).
    candidates:
      await q(`select d.account, d.discrepancy_key, m.side, m.candidate_id, c.discrepancy_key as candidate_key,
      m.rank, m.amount_cents, m.business_date::text, m.candidate_business_date::text, m.merchant_transaction_id,
      m.score, m.checks from match_candidates m join discrepancies d using (discrepancy_id)
      left join discrepancies c on c.discrepancy_id = m.candidate_discrepancy_id order by 1, 2, 3, 4`),
  };
}

/**
 * The roll-forward's kept days of the range just run (reconcile/rules/settlement-kept.ts) that its
 * next run would trust (kept by the run that last matched the date): their kept items must be the
 * view's items of the day, and their kept sums the view's items summed by day and currency (migration
 * 0050). Any item a change moved that the run did not touch shows here, even when no discrepancy of
 * the day happens to change. Of `account` only: another account's kept days are those of its last run,
 * which later writes may have moved (its next run looks at them again).
 */
export async function keptAgainstView(
  db: Kysely<Database>,
  from: string,
  to: string,
  account = 'default',
): Promise<{ wrong: unknown[]; days: number }> {
  const trusted = `select k.account, k.business_date from recon_work.settlement_kept_days k
    join recon_work.matched_days m using (account, business_date)
    where m.run_id = k.run_id and k.account = '${account}' and k.business_date between '${from}' and '${to}'`;
  const r = await sql
    .raw<Record<string, unknown>>(
      `
    with trusted as (${trusted}),
    v as (select ${KEPT_COLUMNS} from settlement_items i join trusted using (account, business_date)),
    k as (select i.* from recon_work.settlement_kept_items i join trusted using (account, business_date)),
    s as (select account, business_date, currency, count(*) as items,
        coalesce(sum(net_cents) filter (where side = 'provider'), 0)::bigint as provider_net,
        coalesce(sum(net_cents) filter (where side = 'ledger'), 0)::bigint as ledger_net
      from v group by account, business_date, currency),
    ks as (select s.account, s.business_date, s.currency, s.items, s.provider_net, s.ledger_net
      from recon_work.settlement_kept_sums s join trusted using (account, business_date))
    select 'not kept' as what, to_jsonb(x) as row from (select * from v except all select * from k) x
    union all select 'kept, not in the view', to_jsonb(x) from (select * from k except all select * from v) x
    union all select 'sums not kept', to_jsonb(x) from (select * from s except all select * from ks) x
    union all select 'sums kept, not the view''s', to_jsonb(x) from (select * from ks except all select * from s) x`,
    )
    .execute(db);
  const n = await sql.raw<{ n: number }>(`select count(*)::int as n from (${trusted}) t`).execute(db);
  return { wrong: r.rows, days: n.rows[0]!.n };
}

export async function dropKeyIndexes(db: Kysely<Database>): Promise<void> {
  await sql`drop index if exists recon_work.settlement_kept_items_key_idx, recon_work.settlement_kept_items_pair_idx,
    recon_work.settlement_kept_items_odd_idx`.execute(db);
}

/**
 * What a crash of the server leaves: every UNLOGGED table empty (recon_work's matched ranges and their
 * findings, the roll-forward's kept items, days and sums), the logged ones as they were
 * (recon_work.matched_days, the change log). The next runs must read what they no longer find.
 */
export async function crashEmptiesUnlogged(db: Kysely<Database>): Promise<void> {
  const r = await sql<{ name: string }>`select format('%I.%I', n.nspname, c.relname) as name
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where c.relpersistence = 'u' and c.relkind in ('r', 'p')`.execute(db);
  if (r.rows.length > 0) await sql.raw(`truncate ${r.rows.map((x) => x.name).join(', ')}`).execute(db);
}
