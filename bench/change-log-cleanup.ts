import { loadavg } from 'node:os';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import { dropSeenChanges } from '../reconcile/seen-changes.ts';
import { pgBackendCpuSeconds } from './backend-cpu.ts';
import { openBenchServer } from './scratch-databases.ts';

/**
 * How a run drops a first run's change log (reconcile/seen-changes.ts), on a database the matching
 * bench kept (`RECON_BENCH_KEEP=1 RECON_BENCH_DB=name node bench/matching.ts`):
 * `node bench/change-log-cleanup.ts name [rounds]`. The log is filled with the keys the bench's load
 * noted (one row per table written: its provider transactions', ledger entries' and notifications'
 * ids). Then the product's own call, dropSeenChanges, runs alternated down its two paths, each in a
 * transaction rolled back, after a checkpoint (as in a run, where the log's pages were written long
 * before; BENCH_CHECKPOINT=0 leaves it out): the truncate, with every kept date's snapshot taken
 * after the fill (so every row is one no run needs), and the delete, the path a run takes when a
 * writer holds the log (a second connection holds it ROW EXCLUSIVE, as a load that has not ended
 * does, so the NOWAIT lock fails). Prints the wall time, the backend's CPU and the WAL each wrote.
 * Empties the log at the end.
 */
async function fillLog(db: Kysely<Database>): Promise<string> {
  await sql`truncate recon_work.changed_keys`.execute(db);
  await sql`insert into recon_work.changed_keys (transaction_ids, merchant_transaction_ids)
    select array_agg(transaction_id), array_agg(merchant_transaction_id) from provider_transactions`.execute(
    db,
  );
  await sql`insert into recon_work.changed_keys (merchant_transaction_ids)
    select array_agg(merchant_transaction_id) from merchant_ledger`.execute(db);
  await sql`insert into recon_work.changed_keys (transaction_ids, merchant_transaction_ids)
    select array_agg(transaction_id), array_agg(merchant_transaction_id) from notifications`.execute(db);
  const size = await sql<{
    s: string;
  }>`select pg_size_pretty(pg_total_relation_size('recon_work.changed_keys')) as s`.execute(db);
  return size.rows[0]!.s;
}

type Path = 'delete' | 'truncate';

/** Inside the measured transaction, before the clock starts: every kept date saw the filled log. */
async function keptDatesSawTheLog(trx: Transaction<Database>): Promise<void> {
  await sql`update recon_work.matched_days set seen = pg_current_snapshot()`.execute(trx);
}

/** A writer of keys that has not ended: the run's NOWAIT lock fails and it deletes. */
async function holdLog(writer: Kysely<Database>): Promise<() => Promise<void>> {
  await sql`begin`.execute(writer);
  await sql`lock table recon_work.changed_keys in row exclusive mode`.execute(writer);
  return async () => {
    await sql`rollback`.execute(writer);
  };
}

async function measure(db: Kysely<Database>, writer: Kysely<Database>, path: Path): Promise<string> {
  if (process.env.BENCH_CHECKPOINT !== '0') await sql`checkpoint`.execute(db);
  const release = path === 'delete' ? await holdLog(writer) : async () => {};
  try {
    return await db
      .transaction()
      .execute(async (trx) => {
        await keptDatesSawTheLog(trx);
        const lsn = await sql<{ l: string }>`select pg_current_wal_insert_lsn()::text as l`.execute(trx);
        const cpu0 = await pgBackendCpuSeconds(trx);
        const t0 = performance.now();
        await dropSeenChanges(trx);
        const wall = performance.now() - t0;
        const wal = await sql<{
          b: string;
        }>`select pg_size_pretty(pg_current_wal_insert_lsn() - ${lsn.rows[0]!.l}::pg_lsn) as b`.execute(trx);
        const cpu1 = await pgBackendCpuSeconds(trx);
        const left = await sql<{
          n: string;
        }>`select count(*)::text as n from recon_work.changed_keys`.execute(trx);
        const cpu = cpu0 === null || cpu1 === null ? '?' : ((cpu1 - cpu0) * 1000).toFixed(0);
        throw new RolledBack(
          `${path.padEnd(9)} ${wall.toFixed(0).padStart(5)} ms wall, backend CPU ${cpu} ms, WAL ${wal.rows[0]!.b}, rows left ${left.rows[0]!.n} (load ${loadavg()[0]!.toFixed(1)})`,
        );
      })
      .catch((error: unknown) => {
        if (error instanceof RolledBack) return error.message;
        throw error;
      });
  } finally {
    await release();
  }
}

/** Ends the measured transaction with a rollback (Kysely rolls back on a throw) and carries the line. */
class RolledBack extends Error {}

const [name, rounds = '4'] = process.argv.slice(2);
if (name === undefined)
  throw new Error('usage: node bench/change-log-cleanup.ts <kept bench database> [rounds]');
const server = await openBenchServer();
// One connection each: the run's, and a writer of keys that holds the log for the delete's rounds.
const handle = server.open(name, 1);
const writer = server.open(name, 1);
try {
  process.stdout.write(`change log ${await fillLog(handle.db)}; load ${loadavg()[0]!.toFixed(1)}\n`);
  for (let i = 0; i < Number(rounds); i++) {
    for (const path of i % 2 === 0 ? (['delete', 'truncate'] as const) : (['truncate', 'delete'] as const))
      process.stdout.write(`${await measure(handle.db, writer.db, path)}\n`);
  }
  await sql`truncate recon_work.changed_keys`.execute(handle.db);
} finally {
  await writer.close();
  await handle.close();
  await server.close();
}
