import { loadavg } from 'node:os';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/database.ts';
import { pgBackendCpuSeconds } from './backend-cpu.ts';
import { openBenchServer } from './scratch-databases.ts';

/**
 * How a run drops a first run's change log (reconcile/seen-changes.ts), on a database the matching
 * bench kept (`RECON_BENCH_KEEP=1 RECON_BENCH_DB=name node bench/matching.ts`):
 * `node bench/change-log-cleanup.ts name [rounds]`. The log is filled with the keys the bench's load
 * noted (one row per table written: its provider transactions', ledger entries' and notifications'
 * ids), then the delete of every row and the truncate (its lock taken without waiting, the rows
 * checked under it) run alternated, each in a transaction rolled back, after a checkpoint (as in a
 * run, where the log's pages were written long before; BENCH_CHECKPOINT=0 leaves it out). Prints the
 * wall time, the backend's CPU and the WAL each wrote. Empties the log at the end.
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

// Every row of the filled log is older than any snapshot taken after it.
const HORIZON = sql`pg_snapshot_xmin(pg_current_snapshot())`;

const VARIANTS: Record<string, (db: Kysely<Database>) => Promise<unknown>> = {
  delete: (db) => sql`delete from recon_work.changed_keys where change_xid < ${HORIZON}`.execute(db),
  truncate: async (db) => {
    await sql`savepoint s`.execute(db);
    await sql`lock table recon_work.changed_keys in access exclusive mode nowait`.execute(db);
    await sql`select bool_and(c.change_xid < ${HORIZON}) from recon_work.changed_keys c`.execute(db);
    await sql`truncate recon_work.changed_keys`.execute(db);
    await sql`release savepoint s`.execute(db);
  },
};

async function measure(db: Kysely<Database>, name: string): Promise<string> {
  if (process.env.BENCH_CHECKPOINT !== '0') await sql`checkpoint`.execute(db);
  await sql`begin`.execute(db);
  const lsn = await sql<{ l: string }>`select pg_current_wal_insert_lsn()::text as l`.execute(db);
  const cpu0 = await pgBackendCpuSeconds(db);
  const t0 = performance.now();
  await VARIANTS[name]!(db);
  const wall = performance.now() - t0;
  const wal = await sql<{
    b: string;
  }>`select pg_size_pretty(pg_current_wal_insert_lsn() - ${lsn.rows[0]!.l}::pg_lsn) as b`.execute(db);
  const cpu1 = await pgBackendCpuSeconds(db);
  await sql`rollback`.execute(db);
  const cpu = cpu0 === null || cpu1 === null ? '?' : ((cpu1 - cpu0) * 1000).toFixed(0);
  return `${name.padEnd(9)} ${wall.toFixed(0).padStart(5)} ms wall, backend CPU ${cpu} ms, WAL ${wal.rows[0]!.b} (load ${loadavg()[0]!.toFixed(1)})`;
}

const [name, rounds = '4'] = process.argv.slice(2);
if (name === undefined)
  throw new Error('usage: node bench/change-log-cleanup.ts <kept bench database> [rounds]');
const server = await openBenchServer();
// One connection: the transactions below are begun and ended by hand.
const handle = server.open(name, 1);
try {
  process.stdout.write(`change log ${await fillLog(handle.db)}; load ${loadavg()[0]!.toFixed(1)}\n`);
  for (let i = 0; i < Number(rounds); i++) {
    for (const variant of i % 2 === 0 ? ['delete', 'truncate'] : ['truncate', 'delete'])
      process.stdout.write(`${await measure(handle.db, variant)}\n`);
  }
  await sql`truncate recon_work.changed_keys`.execute(handle.db);
} finally {
  await handle.close();
  await server.close();
}
