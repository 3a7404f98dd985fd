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
 *   node bench/index-plans.ts [--rows 1000000] [--windows-out-of-order]
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

/** The cheaper form tried for provider_transactions_on_idx: a block-range summary, as legacy_transactions_on_idx is. */
const BRIN_ON = `create index provider_transactions_on_idx on provider_transactions using brin (transaction_on)
  with (pages_per_range = 32)`;

export const INDEX_USES: readonly IndexUse[] = [
  {
    index: 'provider_transactions_on_idx',
    reader: "reconcile/rules/scope.ts (scope_p: the run's provider rows), a 3-day window",
    query: `select transaction_id, merchant_transaction_id from provider_transactions where transaction_on between ${WINDOW}`,

    instead: BRIN_ON,
  },
  {
    index: 'provider_transactions_on_idx',
    reader: 'workbench/queries/overview.ts (the span of days holding data)',
    query: `select min(transaction_on), max(transaction_on) from provider_transactions`,

    instead: BRIN_ON,
  },
  {
    index: 'provider_transactions_mtid_idx',
    reader: 'reconcile/rules/scope.ts (dup_m: ids carried by more than one provider row), a 3-day window',
    query: `select p.merchant_transaction_id from provider_transactions p
      where p.account = 'default' and p.merchant_transaction_id in
        (select merchant_transaction_id from provider_transactions where transaction_on between ${WINDOW})
      group by p.merchant_transaction_id having count(*) > 1`,
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
    instead: BRIN_ON,
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
      if (def) await sql`drop index ${sql.id(use.index)}`.execute(trx);
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
async function generate(db: Kysely<Database>, rows: number, outOfOrder: boolean): Promise<void> {
  await insertBenchLoad(db);
  await generateRows(db, 1, rows, '2026-03-01 05:00:00+00', 30 * 86_400);
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
): Promise<void> {
  const server = await openBenchServer();
  const scratch = `recon_bench_index_plans_${process.pid}`;
  const { db } = await server.create(scratch, { poolSize: 1 });
  try {
    const how = outOfOrder ? ', written in 3-day windows out of date order' : '';
    log(`-- ${rows.toLocaleString('en')} provider transactions over 30 days, as many legacy rows${how}`);
    await generate(db, rows, outOfOrder);
    for (const use of [...INDEX_USES, ...ANALYST_USES]) log(`${await planUse(db, use)}\n`);
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
  );
}
