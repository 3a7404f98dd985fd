import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { openBenchServer } from './scratch-databases.ts';

/**
 * Would partitioning provider_transactions by month of the business date pay? In a copy of a
 * warehouse prepared by bench/nightly.ts (`--keep`), builds the same rows as a table partitioned by
 * month of `transaction_on` (one partition a month, the indexes the warehouse has), then runs, on the
 * table as it is and on the partitioned one, the two kinds of read a night makes of it:
 *
 * - by business date: the window's rows (matching's scope);
 * - by transaction id: the night's pulled ids looked up one by one (the loader's merge, the claims,
 *   the duplicate search). A partitioned table cannot hold a UNIQUE key without the partition column,
 *   so this lookup probes every month's index.
 *
 *   node bench/partition-probe.ts --database recon_bench_nightly_large_10000000_15000
 */
export async function probePartitioning(template: string, log: (line: string) => void): Promise<void> {
  const server = await openBenchServer();
  const copy = `${template}_partition_${process.pid}`;
  const { db, close } = await server.create(copy, { template, poolSize: 1 });
  try {
    const t0 = performance.now();
    const months = await sql<{ m: string }>`
      select to_char(m, 'YYYY-MM-DD') as m from generate_series(
        (select date_trunc('month', min(transaction_on)) from provider_transactions),
        (select date_trunc('month', max(transaction_on)) from provider_transactions), interval '1 month') m`.execute(
      db,
    );
    await sql`create table pt_by_month (like provider_transactions including defaults) partition by range (transaction_on)`.execute(
      db,
    );
    for (const { m } of months.rows)
      await sql
        .raw(
          `create table pt_by_month_${m.slice(0, 7).replace('-', '_')} partition of pt_by_month for values from ('${m}') to ('${m}'::date + interval '1 month')`,
        )
        .execute(db);
    await sql`insert into pt_by_month select * from provider_transactions`.execute(db);
    await sql`create index on pt_by_month (account, transaction_id)`.execute(db);
    await sql`create index on pt_by_month (transaction_on)`.execute(db);
    await sql`create index on pt_by_month (account, merchant_transaction_id)`.execute(db);
    await sql`vacuum analyze pt_by_month`.execute(db);
    log(
      `partition probe: ${months.rows.length} monthly partitions built in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
    );
    // The ids of the nightly window (the last three days), as a pull's staged keys.
    await sql`create table night_ids as select account, transaction_id, merchant_transaction_id from provider_transactions
      where transaction_on >= (select max(transaction_on) - 2 from provider_transactions)`.execute(db);
    await sql`analyze night_ids`.execute(db);
    await sql`set random_page_cost = 1.1`.execute(db);
    for (const [what, query] of [
      [
        'window by business date',
        (t: string) => `select count(*), sum(amount_cents) from ${t} p
        where transaction_on >= (select max(transaction_on) - 2 from provider_transactions)`,
      ],
      [
        "the night's ids, one probe each",
        (t: string) => `select count(*) from night_ids n
        join ${t} p on p.account = n.account and p.transaction_id = n.transaction_id`,
      ],
      [
        "the night's merchant ids (duplicate search)",
        (t: string) => `select count(*) from night_ids n
        join ${t} p on p.account = n.account and p.merchant_transaction_id = n.merchant_transaction_id`,
      ],
    ] as const) {
      for (const table of ['provider_transactions', 'pt_by_month']) {
        const best = await bestOf(3, async () => {
          const plan = await sql
            .raw<{ 'QUERY PLAN': string }>(
              `explain (analyze, buffers, costs off, timing off, summary on) ${query(table)}`,
            )
            .execute(db);
          const lines = plan.rows.map((r) => r['QUERY PLAN']);
          const ms = Number(/Execution Time: ([\d.]+)/.exec(lines.join('\n'))?.[1] ?? NaN);
          const buffers = /Buffers: shared hit=(\d+)(?: read=(\d+))?/.exec(lines.join('\n'));
          return { ms, buffers: Number(buffers?.[1] ?? 0) + Number(buffers?.[2] ?? 0) };
        });
        log(
          `  ${what}: ${table === 'pt_by_month' ? 'partitioned by month' : 'as it is'} ${best.ms.toFixed(1)} ms, ${best.buffers.toLocaleString('en')} buffers`,
        );
      }
    }
  } finally {
    await close();
    await server.drop(copy);
    await server.close();
  }
}

async function bestOf<T extends { ms: number }>(n: number, run: () => Promise<T>): Promise<T> {
  let best: T | undefined;
  for (let i = 0; i < n; i++) {
    const r = await run();
    if (!best || r.ms < best.ms) best = r;
  }
  return best!;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--database');
  if (i < 0) throw new Error('give --database NAME: a warehouse prepared by bench/nightly.ts --keep');
  await probePartitioning(process.argv[i + 1]!, (line) => process.stdout.write(`${line}\n`));
}
