import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/database.ts';
import { type IndexUse, planUse } from './index-plans.ts';
import { dropScratch, openBenchServer } from './scratch-databases.ts';

/**
 * Each secondary index of discrepancies and discrepancy_events, with the queries that need it: the
 * executed plan with the index, without it (dropped in a transaction that is rolled back) and in its
 * form before migration 0044 or 0054, over `rows` discrepancies of two years (bench/index-plans.ts
 * does the same for the provider tables). docs/architecture.md ("Indexes of the discrepancies") shows
 * this output; test/integration/discrepancy-indexes.test.ts checks the plans.
 *
 *   node bench/discrepancy-index-plans.ts [--rows 1000000]
 */

/** The kinds written, each with the rule that finds it (the day-anchored roll-forward last). */
const KINDS: readonly (readonly [string, string])[] = [
  ['missing_in_ledger', 'transaction_vs_ledger'],
  ['missing_at_provider', 'ledger_vs_provider'],
  ['amount_mismatch', 'transaction_vs_ledger'],
  ['currency_mismatch', 'transaction_vs_ledger'],
  ['status_mismatch', 'transaction_vs_ledger'],
  ['return_not_booked', 'return_vs_ledger'],
  ['fee_mismatch', 'fee_vs_schedule'],
  ['notification_missing', 'notification_vs_report'],
  ['notification_late', 'notification_delay'],
  ['notification_mismatch', 'notification_vs_report'],
  ['source_conflict', 'report_vs_legacy'],
  ['settlement_unexplained', 'settlement_roll_forward'],
];

const WORKLIST = `coalesce(currency, ''), (-stake_cents), coalesce(business_date, 'infinity'::date), discrepancy_id`;
/** A nightly's window: three days of the history. */
const WINDOW = `'2025-06-10' and '2025-06-12'`;
/** The three indexes migration 0044 replaced, as they were (several statements: a simple query). */
const BEFORE_0044 = `create index discrepancies_rule_idx on discrepancies (rule);
  create index discrepancies_kind_idx on discrepancies (kind, business_date);
  create index discrepancies_open_idx on discrepancies (business_date) where resolved_at is null`;
/** The index of every row in the worklist order that migration 0054 replaced by the resolved ones'. */
const WORKLIST_ALL = `create index discrepancies_worklist_all_idx on discrepancies (${WORKLIST})`;
/** The columns the worklist's merge orders by (its pages select every column of the row). */
const ROW = `discrepancy_id, currency, stake_cents, business_date`;
const SEARCH = `select discrepancy_id from discrepancies where (transaction_id = 'T000500001'
    or merchant_transaction_id = 'T000500001' or return_transaction_id = 'T000500001')
  order by ${WORKLIST} limit 51`;

export const DISCREPANCY_INDEX_USES: readonly IndexUse[] = [
  {
    index: 'discrepancies_worklist_idx',
    reader: "reconcile/discrepancies/read.ts (the workbench's worklist, unresolved: a page)",
    query: `select discrepancy_id from discrepancies where (resolved_at is null) order by ${WORKLIST} limit 51`,
  },
  {
    index: 'discrepancies_worklist_resolved_idx',
    reader:
      'reconcile/discrepancies/read.ts (the worklist, status=all: a page, the unresolved and the resolved merged)',
    query: `select discrepancy_id from (
        (select ${ROW} from discrepancies where resolved_at is null order by ${WORKLIST} limit 51)
        union all (select ${ROW} from discrepancies where resolved_at is not null order by ${WORKLIST} limit 51)) d
      order by ${WORKLIST} limit 51`,
    instead: WORKLIST_ALL,
  },
  {
    index: 'discrepancies_worklist_resolved_idx',
    reader: 'reconcile/discrepancies/read.ts (the worklist, status=resolved: a page)',
    query: `select discrepancy_id from discrepancies where (resolved_at is not null) order by ${WORKLIST} limit 51`,
    instead: WORKLIST_ALL,
  },
  {
    index: 'discrepancies_worklist_kind_idx',
    reader: 'reconcile/discrepancies/read.ts (the worklist of one kind: a page)',
    query: `select discrepancy_id from discrepancies where (resolved_at is null and kind = 'amount_mismatch')
      order by ${WORKLIST} limit 51`,
  },
  ...['discrepancies_txn_idx', 'discrepancies_mtid_idx', 'discrepancies_return_idx'].map((index) => ({
    index,
    reader: "reconcile/discrepancies/filter.ts (the worklist's search by an id)",
    query: SEARCH,
  })),
  {
    index: 'discrepancies_assignee_idx',
    reader: "reconcile/discrepancies/read.ts (liveTotals: the worklist's totals of one assignee's)",
    query: `select account, kind, currency, count(*)::bigint as count, coalesce(sum(stake_cents), 0)::bigint as cents
      from discrepancies where (resolved_at is null and assignee = 'bob') group by account, kind, currency`,
  },
  {
    index: 'discrepancies_fixed_in_ledger_idx',
    reader: "reconcile/apply-findings.ts (verifyFixedInLedger: a month's fixed_in_ledger resolutions)",
    query: `select discrepancy_id from discrepancies d
      where d.resolution = 'fixed_in_ledger' and d.business_date between '2025-06-01' and '2025-06-30'`,
  },
  {
    index: 'discrepancies_unmatched_idx',
    reader: "reconcile/candidates/find-candidates.ts (the candidates' items: a window and 5 days around it)",
    query: `select discrepancy_id from discrepancies d where d.account = 'default' and d.resolved_at is null
      and d.kind in ('missing_in_ledger','missing_at_provider')
      and d.business_date between date '2025-06-10' - 5 and date '2025-06-12' + 5 and d.currency is not null`,
  },
  {
    index: 'discrepancies_rule_day_idx',
    reader: 'reconcile/rules/looked-at.ts (the rules the warehouse names: a loose scan)',
    query: `with recursive r(rule) as (select min(rule) from discrepancies
        union all select (select min(x.rule) from discrepancies x where x.rule > r.rule) from r where r.rule is not null)
      select rule from r where rule is not null`,
    instead: BEFORE_0044,
  },
  {
    index: 'discrepancies_rule_day_idx',
    reader: "reconcile/rules/settlement.ts (the roll-forward's discrepancies of a window's days)",
    query: `select d.discrepancy_id from discrepancies d
      where d.business_date = any (array['2025-06-10', '2025-06-11', '2025-06-12']::date[])
        and d.rule = 'settlement_roll_forward'`,
    instead: BEFORE_0044,
  },
  {
    index: 'discrepancies_rule_day_idx',
    reader: 'reconcile/rules/looked-at.ts (every discrepancy of a day looked at whole)',
    query: `select d.discrepancy_id from (values (date '2025-06-11')) k(key)
      cross join lateral (select d.discrepancy_id from discrepancies d where d.business_date = k.key offset 0) d`,
    instead: BEFORE_0044,
  },
  {
    index: 'discrepancies_rule_day_idx',
    reader: "reconcile/apply-findings.ts (resolveNotFound: a nightly window's unresolved discrepancies)",
    query: `select d.discrepancy_id from discrepancies d where d.business_date between ${WINDOW} and d.resolved_at is null`,
    instead: BEFORE_0044,
  },
  {
    index: 'discrepancies_rule_day_idx',
    reader: "reconcile/candidates/changed-candidates.ts (a dirty day's missing items)",
    query: `select d.discrepancy_id from (values (date '2025-06-11')) k(key) cross join lateral (
        select d.discrepancy_id from discrepancies d
        where d.business_date = k.key and d.kind in ('missing_in_ledger','missing_at_provider') offset 0) d`,
    instead: BEFORE_0044,
  },
  {
    index: 'discrepancies_rule_day_idx',
    reader: 'workbench/queries/overview.ts (openByDay: the unresolved discrepancies per day of 30 days)',
    query: `select business_date::text as day, nullif(currency, '') as currency, count(*)::bigint as count,
        coalesce(sum(stake_cents), 0)::bigint as cents
      from discrepancies where resolved_at is null and business_date between '2025-06-01' and '2025-06-30'
      group by 1, 2 order by 1, 2`,
    instead: BEFORE_0044,
  },
  {
    index: 'discrepancy_events_discrepancy_idx',
    reader: "reconcile/discrepancies/detail.ts (the discrepancy page's events)",
    query: `select event_id, event, at from discrepancy_events where discrepancy_id = 500001 order by at, event_id`,
  },
];

/**
 * `n` discrepancies over two years (11 kinds and the roll-forward's, each with its rule; 85% CAD;
 * 10% resolved, a tenth of those as fixed_in_ledger; 1% assigned; the return kinds with a return id;
 * missing_at_provider without a transaction id) and one 'opened' event each.
 */
export async function insertHistory(db: Kysely<Database>, n: number): Promise<void> {
  const kinds = KINDS.map(([k]) => k);
  const rules = KINDS.map(([, r]) => r);
  await sql`insert into discrepancies (discrepancy_key, kind, rule, transaction_id, merchant_transaction_id,
      return_transaction_id, business_date, currency, expected_amount_cents, actual_amount_cents, difference_cents,
      status, first_seen_at, last_seen_at, resolved_at, resolution, assignee)
    select 'bench:' || i, k.kind, k.rule,
      case when k.kind not in ('missing_at_provider', 'settlement_unexplained') then 'T' || lpad(i::text, 9, '0') end,
      case when k.kind <> 'settlement_unexplained' then 'M' || lpad(i::text, 9, '0') end,
      case when k.kind = 'return_not_booked' then 'R' || lpad(i::text, 9, '0') end,
      date '2024-07-01' + (i::bigint * 7919 % 730)::int, case when i % 20 < 3 then 'USD' else 'CAD' end,
      a, a - (i::bigint * 31 % 5000), -(i::bigint * 31 % 5000),
      case when i % 10 = 0 then 'resolved' else 'open' end, now(), now(),
      case when i % 10 = 0 then now() end, case when i % 100 = 0 then 'fixed_in_ledger' end,
      case when i % 97 = 0 then (array['alice', 'bob'])[1 + i % 2] end
    from generate_series(1, ${n}::int) i,
      lateral (select (i::bigint * 104729 % 5000000) as a) x,
      lateral (select (${kinds}::text[])[1 + i % ${kinds.length}] as kind,
        (${rules}::text[])[1 + i % ${rules.length}] as rule) k`.execute(db);
  await sql`insert into discrepancy_events (discrepancy_id, event, details, at)
    select discrepancy_id, 'opened', '{}'::jsonb, first_seen_at from discrepancies`.execute(db);
  await sql`vacuum analyze discrepancies, discrepancy_events`.execute(db);
}

export async function benchDiscrepancyIndexPlans(rows: number, log: (line: string) => void): Promise<void> {
  const server = await openBenchServer();
  const scratch = `recon_bench_discrepancy_plans_${process.pid}`;
  const { db } = await server.create(scratch, { poolSize: 1 });
  try {
    log(`-- ${rows.toLocaleString('en')} discrepancies over two years, one event each`);
    await insertHistory(db, rows);
    for (const use of DISCREPANCY_INDEX_USES) log(`${await planUse(db, use)}\n`);
  } finally {
    await db.destroy();
    await dropScratch(server, [scratch], log);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = process.argv.indexOf('--rows');
  await benchDiscrepancyIndexPlans(arg > 0 ? Number(process.argv[arg + 1]) : 1_000_000, (line) =>
    process.stdout.write(`${line}\n`),
  );
}
