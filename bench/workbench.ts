/**
 * `npm run bench` section "workbench": the worklist endpoint over 1,000,000 discrepancies (BENCH_ROWS),
 * through real HTTP on 127.0.0.1 with an API token: the first page (with the filter's totals), a
 * filtered page, and a deep page (a cursor 90% of the way down). Prints the median and worst of
 * repeated requests, and the query plans (EXPLAIN ANALYZE) of each with BENCH_EXPLAIN=1.
 * BENCH_TRIGGER_COST=1 also times an update of last_seen_at on every row with the totals triggers
 * disabled and enabled.
 */
import { performance } from 'node:perf_hooks';
import { type Kysely, sql } from 'kysely';
import { createDatabase } from '../db/database-on-client.ts';
import { createPool } from '../db/pool.ts';
import { createToken } from '../workbench/auth/accounts.ts';
import { buildWorkbench } from '../workbench/server.ts';
import { filterCondition, parseFilter } from '../reconcile/discrepancies/filter.ts';
import { encodeCursor } from '../reconcile/discrepancies/order.ts';
import type { DiscrepancyRow } from '../reconcile/discrepancies/row.ts';
import type { Database } from '../db/database.ts';
import type { BenchContext, BenchResult, BenchStep } from './steps.ts';

const KINDS = [
  'missing_in_ledger',
  'missing_at_provider',
  'amount_mismatch',
  'currency_mismatch',
  'status_mismatch',
  'return_not_booked',
  'fee_mismatch',
  'notification_missing',
  'notification_late',
  'notification_mismatch',
  'source_conflict',
];
const REPEAT = 15;

export const workbenchSteps: BenchStep[] = [
  {
    name: 'workbench worklist',
    async run(ctx): Promise<BenchResult[]> {
      const url = await ctx.newDatabase();
      const pool = createPool(url, 10);
      const db = createDatabase(pool);
      const n = ctx.rows;
      await insertDiscrepancies(ctx, db, n);

      const { token } = await createToken(db, { name: 'bench', role: 'viewer' });
      const app = await buildWorkbench({ db });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const address = app.server.address();
      const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

      const offset = Math.floor(n * 0.9 * 0.9);
      const deep = await deepRow(db, offset);
      const cases: [string, string][] = [
        ['first page (50 items and the totals of ~90% of the rows)', '/api/discrepancies'],
        [
          'filtered page (kind, currency, dates)',
          '/api/discrepancies?kind=amount_mismatch&currency=USD&from=2025-01-01&to=2025-12-31',
        ],
        [
          'filtered page with a minimum (totals counted from the rows)',
          '/api/discrepancies?kind=amount_mismatch&currency=USD&min_cents=4000&from=2025-01-01&to=2025-12-31',
        ],
        [
          `deep page (cursor after item ${offset.toLocaleString('en-US')})`,
          `/api/discrepancies?cursor=${encodeCursor(deep)}`,
        ],
        ['next page of the first (cursor, no totals)', ''],
        ['search by merchant transaction id', '/api/discrepancies?q=M000500001'],
      ];
      const first = (await (
        await fetch(`${base}/api/discrepancies`, { headers: { authorization: `Bearer ${token}` } })
      ).json()) as {
        next_cursor: string;
      };
      cases[4]![1] = `/api/discrepancies?cursor=${first.next_cursor}`;

      const results: BenchResult[] = [];
      for (const [name, path] of cases) results.push(await timeRequests(ctx, base, path, token, name));
      if (process.env.BENCH_EXPLAIN) await explainWorklist(ctx, db, deep);
      if (process.env.BENCH_TRIGGER_COST) results.push(...(await triggerCost(ctx, db)));
      await app.close();
      await db.destroy();
      return results;
    },
  },
];

type DeepRow = Pick<DiscrepancyRow, 'currency' | 'stake_cents' | 'business_date' | 'discrepancy_id'>;

/** `n` discrepancies: 11 kinds, 85% CAD / 15% USD, amounts up to 50,000.00, two years, 10% resolved. */
async function insertDiscrepancies(ctx: BenchContext, db: Kysely<Database>, n: number): Promise<void> {
  ctx.log(`workbench: inserting ${n} discrepancies`);
  const t = performance.now();
  await sql`insert into discrepancies (discrepancy_key, kind, rule, transaction_id, merchant_transaction_id,
      business_date, currency, expected_amount_cents, actual_amount_cents, difference_cents, status,
      first_seen_at, last_seen_at, resolved_at, assignee)
    select 'bench:' || i, (${KINDS}::text[])[1 + i % ${KINDS.length}], 'transaction_vs_ledger',
      'T' || lpad(i::text, 9, '0'), 'M' || lpad(i::text, 9, '0'),
      date '2024-11-01' + (i::bigint * 7919 % 730)::int, case when i % 20 < 3 then 'USD' else 'CAD' end,
      a, a - (i::bigint * 31 % 5000), -(i::bigint * 31 % 5000),
      case when i % 10 = 0 then 'resolved' else 'open' end,
      now(), now(), case when i % 10 = 0 then now() end,
      case when i % 97 = 0 then 'alice' end
    from generate_series(1, ${n}::int) i, lateral (select (i::bigint * 104729 % 5000000) as a) x`.execute(db);
  await sql`vacuum analyze discrepancies`.execute(db);
  ctx.log(`workbench: inserted and analysed in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}

/** The deep page: the item `offset` rows down the default worklist, whose cursor starts it. */
async function deepRow(db: Kysely<Database>, offset: number): Promise<DeepRow> {
  return (
    await sql<DeepRow>`
      select currency, stake_cents, business_date, discrepancy_id from discrepancies
      where ${filterCondition(parseFilter({}))}
      order by coalesce(currency, ''), (-stake_cents), coalesce(business_date, 'infinity'::date), discrepancy_id
      offset ${offset} limit 1`.execute(db)
  ).rows[0]!;
}

/** The median and worst of REPEAT requests of one worklist address. */
async function timeRequests(
  ctx: BenchContext,
  base: string,
  path: string,
  token: string,
  name: string,
): Promise<BenchResult> {
  const times: number[] = [];
  let items = 0;
  for (let i = 0; i < REPEAT; i++) {
    const t = performance.now();
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { items: unknown[] };
    times.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
    items = body.items.length;
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  ctx.log(
    `workbench: ${name}: median ${median.toFixed(1)} ms, worst ${times.at(-1)!.toFixed(1)} ms (${items} items)`,
  );
  return {
    name: `worklist: ${name}`,
    rows: ctx.rows,
    seconds: median / 1000,
    note: `median of ${REPEAT} over HTTP; worst ${times.at(-1)!.toFixed(1)} ms; ${items} items`,
  };
}

/** BENCH_EXPLAIN=1: the query plans of the first, filtered and deep pages and of their totals. */
async function explainWorklist(ctx: BenchContext, db: Kysely<Database>, deep: DeepRow): Promise<void> {
  const explain = async (label: string, query: ReturnType<typeof sql>) => {
    const plan = await sql<{
      'QUERY PLAN': string;
    }>`explain (analyze, buffers, costs off) ${query}`.execute(db);
    ctx.log(`workbench plan: ${label}\n${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}`);
  };
  const deepFilter = parseFilter({});
  const order = sql`order by coalesce(currency, ''), (-stake_cents), coalesce(business_date, 'infinity'::date), discrepancy_id`;
  await explain(
    'first page',
    sql`select * from discrepancies where ${filterCondition(parseFilter({}))} ${order} limit 51`,
  );
  await explain(
    'totals of the default filter (from discrepancy_totals)',
    sql`select kind, nullif(currency, '') as currency, sum(count), sum(cents) from discrepancy_totals
      where status = any(${['open', 'acknowledged']}::text[]) group by kind, currency having sum(count) <> 0`,
  );
  const filtered = parseFilter({
    kind: 'amount_mismatch',
    currency: 'USD',
    min_cents: '4000',
    from: '2025-01-01',
    to: '2025-12-31',
  });
  await explain(
    'filtered page with a minimum',
    sql`select * from discrepancies where ${filterCondition(filtered)} ${order} limit 51`,
  );
  await explain(
    'its totals',
    sql`select kind, currency, count(*), sum(stake_cents) from discrepancies where ${filterCondition(filtered)} group by kind, currency`,
  );
  await explain(
    'deep page',
    sql`select * from discrepancies where ${filterCondition(deepFilter)} and (coalesce(currency, ''), (-stake_cents), coalesce(business_date, 'infinity'::date), discrepancy_id) > (${deep.currency ?? ''}::bpchar, ${-deep.stake_cents}::bigint, ${deep.business_date}::date, ${deep.discrepancy_id}::bigint) ${order} limit 51`,
  );
}

/** BENCH_TRIGGER_COST=1: what the totals' triggers cost a run's update of last_seen_at on every row. */
async function triggerCost(ctx: BenchContext, db: Kysely<Database>): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const triggers of ['disable', 'enable'] as const) {
    await sql.raw(`alter table discrepancies ${triggers} trigger user`).execute(db);
    const t = performance.now();
    await sql`update discrepancies set last_seen_at = now()`.execute(db);
    const seconds = (performance.now() - t) / 1000;
    ctx.log(`workbench: update last_seen_at of every row, triggers ${triggers}d: ${seconds.toFixed(2)} s`);
    results.push({
      name: `update last_seen_at of every discrepancy, totals triggers ${triggers}d`,
      rows: ctx.rows,
      seconds,
    });
    await sql`vacuum discrepancies`.execute(db);
  }
  return results;
}
