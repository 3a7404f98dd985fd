import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/database.ts';

/** What the engine needs at least for a first run over the range, measured on the run's own rows. */
export interface MatchingFloor {
  /** Parallel CREATE UNLOGGED TABLE AS of provider ⋈ ledger ⋈ latest notification, seconds. */
  readonly joinSeconds: number;
  /** The two claim inserts, sorted, into empty logged copies of the claim tables with their unique keys. */
  readonly claimsSeconds: number;
  readonly seconds: number;
}

/**
 * The floor of a first run (issue 30, section 2): the three-way join a run cannot avoid, written once
 * by a parallel `CREATE UNLOGGED TABLE AS`, plus the two claim inserts it cannot avoid either, sorted
 * (18.4 s unsorted against 6.4–8.7 s sorted at 1,000,000 rows), into logged tables that carry the
 * claim tables' unique keys and checks. Everything it creates is dropped again; the warehouse's own
 * tables are only read. Run with the run's session settings (work_mem, parallel_tuple_cost), so that
 * the two are compared on the same terms.
 */
export async function measureMatchingFloor(
  db: Kysely<Database>,
  range: { from: string; to: string },
): Promise<MatchingFloor> {
  return db.connection().execute(async (c) => {
    await sql`set work_mem = '256MB'`.execute(c);
    await sql`set jit = off`.execute(c);
    await sql`set parallel_tuple_cost = 0.01`.execute(c);
    const t0 = performance.now();
    await sql`create unlogged table bench_floor_join as
      select p.transaction_id, p.merchant_transaction_id, p.amount_cents, p.currency, p.status,
        l.merchant_transaction_id as l_mtid, l.amount_cents as l_amount, l.currency as l_currency, l.status as l_status,
        n.notification_id, n.received_at, n.amount_cents as n_amount, n.status as n_status
      from provider_transactions p
      left join merchant_ledger l on l.account = p.account and l.merchant_transaction_id = p.merchant_transaction_id
      left join (select distinct on (transaction_id) transaction_id, notification_id, received_at, amount_cents, status
                 from notifications where kind = 'transaction'
                 order by transaction_id, received_at desc, notification_id desc) n
        on n.transaction_id = p.transaction_id
      where p.transaction_on between ${range.from}::date and ${range.to}::date`.execute(c);
    const t1 = performance.now();
    await sql`create table bench_floor_tm (like transaction_matches including defaults including constraints including indexes)`.execute(
      c,
    );
    await sql`create table bench_floor_nm (like notification_matches including defaults including constraints including indexes)`.execute(
      c,
    );
    const t2 = performance.now();
    await sql`insert into bench_floor_tm (transaction_id, merchant_transaction_id, rule, run_id)
      select transaction_id, l_mtid, 'merchant_transaction_id', null from bench_floor_join
      where l_mtid is not null order by transaction_id`.execute(c);
    await sql`insert into bench_floor_nm (notification_id, kind, target_id, first_received_at, rule, run_id)
      select notification_id, 'transaction', transaction_id, received_at, 'transaction_id', null from bench_floor_join
      where notification_id is not null order by transaction_id`.execute(c);
    const t3 = performance.now();
    await sql`drop table bench_floor_join, bench_floor_tm, bench_floor_nm`.execute(c);
    for (const setting of ['work_mem', 'jit', 'parallel_tuple_cost'])
      await sql`reset ${sql.raw(setting)}`.execute(c);
    const joinSeconds = (t1 - t0) / 1000;
    const claimsSeconds = (t3 - t2) / 1000;
    return { joinSeconds, claimsSeconds, seconds: joinSeconds + claimsSeconds };
  });
}
