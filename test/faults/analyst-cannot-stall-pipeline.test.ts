import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateLegacyType5 } from '../../bench/generate-files.ts';
import { createDatabase } from '../../db/database-on-client.ts';
import { createPool } from '../../db/pool.ts';
import { deriveMerchantView } from '../../sandbox/merchant-view.ts';
import { loadMerchantView, reconcileViewArgs } from '../support/load-merchant-view.ts';
import { type FaultPostgres, startFaultPostgres } from '../support/fault-postgres.ts';
import { query, recon } from '../support/recon-process.ts';

// Issue 15, section 4: no analyst session can stall the pipeline. Reproduction: as recon_analyst,
// `select pg_advisory_lock(28794560), pg_sleep(30)`; a reconcile run started meanwhile waited for as
// long as the analyst held the lock. Now the run serialises on a table analysts cannot reach, and no
// read an analyst can run, however long, and no transaction left open delays a load or a run.

/** docs/operations.md ("When something fails"): an analyst session adds no lock wait; allowed here: the time alone twice + 10 s. */
const boundMs = (aloneMs: number) => 2 * aloneMs + 10_000;

let server: FaultPostgres;
let dir: string;
let analystUrl: string;
const view = deriveMerchantView({ seed: 3, transactions: 800, from: '2026-03-01', to: '2026-03-10' });
// Both runs match the whole range (--full) over the same rows: the bound compares like with like, not
// a run before the import's 20,000 rows with one after them.
const reconcileArgs = [...reconcileViewArgs(view), '--full'];
let legacyFile: string;
const importArgs = () => ['import', '--format', 'legacy', '--query-type', '5', legacyFile];
const alone = { reconcile: 0, load: 0 };
const held: pg.Client[] = [];

async function analystSession(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: analystUrl });
  client.on('error', () => {});
  await client.connect();
  held.push(client);
  return client;
}

beforeAll(async () => {
  server = await startFaultPostgres();
  dir = mkdtempSync(join(tmpdir(), 'recon-analyst-stall-'));
  legacyFile = join(dir, 'legacy-20k.csv');
  await generateLegacyType5(legacyFile, 20_000);
  const pool = createPool(server.url, 2);
  const db = createDatabase(pool);
  try {
    await loadMerchantView(db, view);
  } finally {
    await db.destroy();
  }
  const added = await recon(server.url, ['analysts', 'add', 'ana'], {
    RECON_ANALYST_PASSWORD: 'ana-secret-1',
  });
  expect(added.stderr).toBe('');
  expect(added.code).toBe(0);
  const u = new URL(server.url);
  u.username = 'ana';
  u.password = 'ana-secret-1';
  analystUrl = u.toString();
});
afterAll(async () => {
  for (const c of held) await c.end().catch(() => {});
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('analyst logins', () => {
  it('get statement and idle-in-transaction time limits, and cannot reach the pipeline schema', async () => {
    const r = await query<{ s: string; i: string }>(
      analystUrl,
      `select current_setting('statement_timeout') as s, current_setting('idle_in_transaction_session_timeout') as i`,
    );
    expect(r.rows[0]).toEqual({ s: '15min', i: '5min' });
    await expect(query(analystUrl, 'select * from recon_work.reconcile_lock')).rejects.toThrow(
      /permission denied/,
    );
    await expect(query(analystUrl, 'begin; lock table discrepancies in share mode; commit')).rejects.toThrow(
      /permission denied/,
    );
    // Logins made by hand get the limits from `recon analysts limits`, with other values on request.
    await query(server.url, `create role bob login password 'bob-secret-1' in role recon_analyst`);
    const set = await recon(server.url, ['analysts', 'limits', '--statement-timeout', '60']);
    expect(set.stdout).toBe('time limits set on 2 analyst login(s): ana, bob\n');
    const u = new URL(analystUrl);
    u.username = 'bob';
    u.password = 'bob-secret-1';
    const b = await query<{ s: string }>(u.toString(), `select current_setting('statement_timeout') as s`);
    expect(b.rows[0]!.s).toBe('1min');
    await recon(server.url, ['analysts', 'limits']);
  });
});

describe('the pipeline beside analyst sessions', () => {
  it('measures a load and a reconcile run alone', async () => {
    const l = await recon(server.url, importArgs());
    expect(l.code).toBe(0);
    alone.load = l.ms;
    const r = await recon(server.url, reconcileArgs);
    expect(r.code).toBe(0);
    alone.reconcile = r.ms;
  });

  it('is not delayed by the old advisory lock, a long read, or a transaction left open on every table', async () => {
    const locker = await analystSession();
    await locker.query('select pg_advisory_lock(28794560)');
    await locker.query('select pg_advisory_lock(0)');
    const reader = await analystSession();
    const longRead = reader
      .query(`select pg_sleep(100), (select count(*) from notification_delivery) as n`)
      .catch(() => undefined);
    const idle = await analystSession();
    await idle.query('begin isolation level repeatable read');
    const relations = await query<{ name: string }>(
      server.url,
      `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'public' and c.relkind in ('r', 'v')
         and has_any_column_privilege('recon_analyst', c.oid, 'select') order by 1`,
    );
    expect(relations.rows.length).toBeGreaterThanOrEqual(25);
    for (const { name } of relations.rows) {
      // The read takes ACCESS SHARE on the table (and a view's tables) until the transaction ends.
      await idle.query(`select count(*) from "${name}"`);
    }

    const run = await recon(server.url, reconcileArgs);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.ms).toBeLessThan(boundMs(alone.reconcile));

    const load = await recon(server.url, importArgs());
    expect(load.code).toBe(0);
    expect(load.ms).toBeLessThan(boundMs(alone.load));

    // The analyst sessions were there all along.
    expect((await idle.query('select 1 as one')).rows[0].one).toBe(1);
    // The long read is still running (it ends when the session is closed after the tests).
    expect(await Promise.race([longRead.then(() => 'ended'), Promise.resolve('running')])).toBe('running');
  });
});
