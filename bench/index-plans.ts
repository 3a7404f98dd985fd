import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/database.ts';
import { generateRows, insertBenchLoad } from './generate-rows.ts';
import { openBenchServer } from './scratch-databases.ts';

/**
 * Each secondary index of the tables the legacy loader writes, with the query that needs it: the
 * query's executed plan and time with the index and without it (dropped inside a transaction that is
 * rolled back), on `rows` generated provider transactions over 30 days (1% PENDING) and as many
 * legacy rows written a day at a time, as loads write them; then the analysts' documented queries
 * over those days ({@link ANALYST_USES}). docs/architecture.md ("Indexes of the provider tables")
 * shows this output.
 *
 * `days` (30 by default) is the history's length: with `--days 360` a 3-day window is a small share of it,
 * as in a warehouse of a year.
 *
 *   node bench/index-plans.ts [--rows 1000000] [--windows-out-of-order] [--days 30]
 */
export interface IndexUse {
  readonly index: string;
  /** Who runs the query (the code or the document that holds it). */
  readonly reader: string;
  readonly query: string;
  /** Instead of only dropping it: the index built another way, to compare (migration 0028's former form, or a cheaper one). */
  readonly instead?: string;
}

const DAY = `'2026-03-11'`;
const WINDOW = `'2026-03-11' and '2026-03-13'`;

/**
 * provider_transactions_on_idx before migration 0042, a B-tree: the schema has a block-range summary
 * (BRIN) instead, as legacy_transactions_on_idx since 0028.
 */
const BTREE_ON = `create index provider_transactions_on_idx on provider_transactions (transaction_on)`;

/**
 * The cheaper form tried for provider_transactions_mtid_idx and not kept: a hash index of the
 * merchant transaction id, the one column every reader joins on (PAIRING_SCOPE adds none). It serves
 * these readers, but made the roll-forward's settlement window of a first run over two years take
 * 275 s instead of 5 s (docs/benchmark-record.md §3).
 */
const HASH_MTID = `create index provider_transactions_mtid_idx on provider_transactions using hash (merchant_transaction_id)`;

export const INDEX_USES: readonly IndexUse[] = [
  {
    index: 'provider_transactions_on_idx',
    reader: "reconcile/rules/scope.ts (scope_p: the run's provider rows), a 3-day window",
    query: `select transaction_id, merchant_transaction_id from provider_transactions where transaction_on between ${WINDOW}`,
    instead: BTREE_ON,
  },
  {
    index: 'provider_transaction_days_pkey',
    reader: 'workbench/queries/overview.ts (the span of days holding data, from provider_transaction_days)',
    query: `select min(transaction_on), max(transaction_on) from provider_transaction_days`,
  },
  {
    index: 'provider_transactions_mtid_idx',
    reader:
      "reconcile/rules/scope.ts (dup_m: the window's ids another provider row carries, in any range), a 3-day window",
    query: `select distinct s.mtid from (select transaction_id, merchant_transaction_id as mtid from provider_transactions
        where transaction_on between ${WINDOW}) s
      where exists (select 1 from provider_transactions p
        where p.merchant_transaction_id = s.mtid and p.transaction_id <> s.transaction_id)`,
    instead: HASH_MTID,
  },
  {
    index: 'provider_transactions_mtid_idx',
    reader:
      "reconcile/rules/transactions.ts (missing_at_provider: the window's ledger entries no provider row carries)",
    query: `select l.merchant_transaction_id from merchant_ledger l
      where l.booked_at >= '2026-03-11 04:00+00' and l.booked_at < '2026-03-14 04:00+00'
        and not exists (select 1 from provider_transactions p where p.merchant_transaction_id = l.merchant_transaction_id)`,
    instead: HASH_MTID,
  },
  {
    index: 'provider_transactions_mtid_idx',
    reader:
      'reconcile/rules/keyed-rows.ts (a run over changed keys: the rows of 10 changed merchant transaction ids)',
    query: `with keyed as materialized (select x.* from (select 'M' || lpad((i * 397)::text, 10, '0') as key
          from generate_series(1, 10) i) k
        cross join lateral (select * from provider_transactions x where x.merchant_transaction_id = k.key offset 0) x)
      select count(*) from keyed`,
    instead: HASH_MTID,
  },
  {
    index: 'provider_transactions_mtid_idx',
    reader:
      'reconcile/discrepancies/detail.ts (the discrepancy page: the rows of its transaction and merchant ids)',
    query: `select transaction_id, merchant_transaction_id, amount_cents from provider_transactions
      where transaction_id = any(array['T0000000998', 'D0000000998']) or merchant_transaction_id = any(array['M0000000998'])
      order by transaction_at nulls last, transaction_id limit 50`,
    instead: HASH_MTID,
  },
  {
    index: 'provider_transactions_non_final_idx',
    reader: 'ingest/follow-up/follow-up-non-final.ts (the non-final rows to ask about, oldest first)',
    query: `select transaction_id, transaction_on from provider_transactions
      where account = 'default' and status = 'PENDING' and transaction_on >= '2026-03-01' and transaction_on < ${DAY}
      order by transaction_on, transaction_at, transaction_id limit 1000`,
  },
  {
    index: 'provider_transactions_pending_idx',
    reader: 'dropped by migration 0028: the same follow-up query, which no longer reads it',
    query: `select transaction_id, transaction_on from provider_transactions
      where account = 'default' and status = 'PENDING' and transaction_on >= '2026-03-01' and transaction_on < ${DAY}
      order by transaction_on, transaction_at, transaction_id limit 1000`,
    instead: `create index provider_transactions_pending_idx on provider_transactions (transaction_at) where status = 'PENDING'`,
  },
  {
    index: 'legacy_transactions_on_idx',
    reader:
      "reconcile/volume/source-days.ts (a window's rows per day) and docs/analysts.md (a month's failures)",
    query: `select transaction_on, count(*) from legacy_transactions where transaction_on between ${WINDOW} group by 1`,
    instead: 'create index legacy_transactions_on_idx on legacy_transactions (transaction_on)',
  },
];

/**
 * Analysts' documented queries (docs/analysts.md) that read the days of the loader's tables: their
 * plans as the schema is, without the index they could use, and with its form before migration 0028.
 */
export const ANALYST_USES: readonly IndexUse[] = [
  {
    index: 'legacy_transactions_on_idx',
    reader:
      "docs/analysts.md: consumers with more than one failed transaction in March (the whole month's rows here)",
    query: `select consumer_email_hash, count(*) from legacy_transactions_redacted
      where status = 'FAILED' and transaction_on between '2026-03-01' and '2026-03-31' group by 1 having count(*) > 1`,
    instead: 'create index legacy_transactions_on_idx on legacy_transactions (transaction_on)',
  },
  {
    index: 'provider_transactions_on_idx',
    reader: "docs/analysts.md: a day's roll-forward per account and currency (daily_settlement_totals)",
    query: `select account, currency, provider_net_cents, ledger_net_cents, difference_cents, explained_cents,
        unexplained_cents
      from daily_settlement_totals where business_date = ${DAY} order by account, currency`,
    instead: BTREE_ON,
  },
];

/**
 * The workbench overview's span of days as it was read before migration 0042 (min/max over
 * provider_transactions), with the B-tree it needed: what provider_transaction_days replaces.
 */
export const FORMER_USES: readonly IndexUse[] = [
  {
    index: 'provider_transactions_on_idx',
    reader: 'workbench/queries/overview.ts before migration 0042 (min/max over provider_transactions)',
    query: `select min(transaction_on), max(transaction_on) from provider_transactions`,
    instead: BTREE_ON,
  },
];

/** Executed plan (no costs, no per-node timing) and execution time of `query`. */
async function plan(db: Kysely<Database>, query: string): Promise<string> {
  const r = await sql<{
    'QUERY PLAN': string;
  }>`explain (analyze, costs off, timing off, summary on, buffers off)
    ${sql.raw(query)}`.execute(db);
  return r.rows
    .map((x) => x['QUERY PLAN'])
    .filter((l) => !/Planning Time/.test(l))
    .join('\n');
}

/** The plans of one use: as the schema is, without the index, and with its other form if given. */
export async function planUse(db: Kysely<Database>, use: IndexUse): Promise<string> {
  const out = [`-- ${use.index}: ${use.reader}`, use.query.replace(/\s+/g, ' ')];
  const exists = await sql<{
    def: string | null;
  }>`select pg_get_indexdef(to_regclass(${use.index})) as def`.execute(db);
  const def = exists.rows[0]?.def ?? null;
  out.push(`-- with ${def ?? `(no ${use.index})`}:`, await plan(db, use.query));
  await db
    .transaction()
    .execute(async (trx) => {
      if (def) await dropIndex(trx, use.index);
      out.push(`-- without ${use.index}:`, await plan(trx, use.query));
      if (use.instead) {
        await sql.raw(use.instead).execute(trx);
        await sql`analyze provider_transactions, legacy_transactions`.execute(trx);
        out.push(`-- with ${use.instead}:`, await plan(trx, use.query));
      }
      // Thrown to roll the transaction back: the index is back as it was.
      throw new RolledBack();
    })
    .catch((e: unknown) => {
      if (!(e instanceof RolledBack)) throw e;
    });
  return out.join('\n');
}

class RolledBack extends Error {}

/** Drops `index`, through its constraint when it has one (a primary key). */
async function dropIndex(db: Kysely<Database>, index: string): Promise<void> {
  const owner = await sql<{ t: string }>`select conrelid::regclass::text as t from pg_constraint
    where conindid = to_regclass(${index})`.execute(db);
  const table = owner.rows[0]?.t;
  if (table) await sql`alter table ${sql.id(table)} drop constraint ${sql.id(index)}`.execute(db);
  else await sql`drop index ${sql.id(index)}`.execute(db);
}

/**
 * The order in which the rows of 3-day backfill windows are written when they load out of date order:
 * the windows' permutation 0, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4 (window w goes (7w mod 11)th), each
 * window's rows in time order, as a backfill of a month run window by window in another order would
 * leave them.
 */
const WINDOWS_OUT_OF_ORDER = `((transaction_on - date '2026-03-01') / 3 * 7) % 11, transaction_at, transaction_id`;

/**
 * Provider rows (1% PENDING) and legacy rows written a day at a time, as loads write them; with
 * `outOfOrder`, both tables' rows written window by window out of date order
 * ({@link WINDOWS_OUT_OF_ORDER}): what block-range (BRIN) summaries of the days must still serve.
 */
async function generate(
  db: Kysely<Database>,
  rows: number,
  outOfOrder: boolean,
  days: number,
): Promise<void> {
  await insertBenchLoad(db);
  await generateRows(db, 1, rows, '2026-03-01 05:00:00+00', days * 86_400, { duplicates: true });
  await sql`update provider_transactions set status = 'PENDING', raw_status = 'PENDING'
    where substr(transaction_id, 2)::int % 100 = 0`.execute(db);
  const order = outOfOrder ? WINDOWS_OUT_OF_ORDER : 'transaction_on, transaction_id';
  if (outOfOrder) {
    await sql`create temporary table written as select * from provider_transactions`.execute(db);
    await sql`truncate provider_transactions`.execute(db);
    await sql`insert into provider_transactions select * from written order by ${sql.raw(order)}`.execute(db);
    await sql`drop table written`.execute(db);
  }
  await sql`insert into legacy_transactions (transaction_id, transaction_on, raw_transaction_type, merchant_transaction_id,
      amount_cents, currency, status, raw_status, transaction_at, query_type, load_id, first_load_id, raw)
    select transaction_id, transaction_on, raw_transaction_type, merchant_transaction_id, amount_cents, currency, status,
      raw_status, transaction_at, '5', 1, 1, ''
    from provider_transactions order by ${sql.raw(order)}`.execute(db);
  await sql`vacuum analyze provider_transactions, legacy_transactions`.execute(db);
}

export async function benchIndexPlans(
  rows: number,
  log: (line: string) => void,
  outOfOrder = false,
  days = 30,
): Promise<void> {
  const server = await openBenchServer();
  const scratch = `recon_bench_index_plans_${process.pid}`;
  const { db } = await server.create(scratch, { poolSize: 1 });
  try {
    const how = outOfOrder ? ', written in 3-day windows out of date order' : '';
    log(`-- ${rows.toLocaleString('en')} provider transactions over ${days} days, as many legacy rows${how}`);
    await generate(db, rows, outOfOrder, days);
    for (const use of [...INDEX_USES, ...ANALYST_USES, ...FORMER_USES]) log(`${await planUse(db, use)}\n`);
  } finally {
    await db.destroy();
    await server.drop(scratch);
    await server.close();
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = process.argv.indexOf('--rows');
  await benchIndexPlans(
    arg > 0 ? Number(process.argv[arg + 1]) : 1_000_000,
    (line) => process.stdout.write(`${line}\n`),
    process.argv.includes('--windows-out-of-order'),
    process.argv.includes('--days') ? Number(process.argv[process.argv.indexOf('--days') + 1]) : 30,
  );
}
