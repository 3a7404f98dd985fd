import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import type { Database } from '../../db/database.ts';
import { recordWriteOff, setTolerances } from '../../reconcile/tolerances/index.ts';
import { parseSettingsFile } from '../../reconcile/tolerances/settings-file.ts';
import { createPreviewJobs, PreviewBusy } from '../../workbench/preview-jobs.ts';
import { createDatabase } from '../../db/database-on-client.ts';
import { createPool } from '../../db/pool.ts';
import { recon } from '../support/recon-process.ts';
import { seedAmountDifferences } from '../support/amount-differences.ts';
import { as, call, type Served, type SignedIn } from '../support/workbench-http.ts';
import { sessionOf, startWorkbench, stopWorkbench, tokenHeader } from '../support/workbench-fixture.ts';

// Tolerances, write-offs and the preview in the workbench (issue 29, sections 3 and 4): the reads
// within the caller's accounts, the CSV the CLI writes, a preview started by an operator and read
// when done, applied by an admin only, and the routes in the OpenAPI document.

let h: DatabaseHandle;
let server: Served;
let admin: SignedIn;
let op: SignedIn;
let viewer: SignedIn;
let beta: { authorization: string };
let betaAdmin: { authorization: string };

/** Amount differences of 1, 3 and 9 cents on default; people accepted the 9. Beta has tolerances. */
async function seed(db: Kysely<Database>) {
  await seedAmountDifferences(db);
  await setTolerances(db, {
    account: 'beta',
    changes: [{ currency: 'USD', amountCents: 2, dateLagBusinessDays: 1, writeOffLimitCents: 10 }],
    setBy: 'cli:bo',
    note: 'beta rounds',
  });
  const at = '2026-03-10T15:00:00Z';
  const first = await recordWriteOff(db, {
    account: 'default',
    currency: 'CAD',
    amountCents: -3,
    reason: 'fee a few cents under',
    writtenOffBy: 'ada',
    at,
  });
  await recordWriteOff(db, {
    account: 'default',
    currency: 'CAD',
    amountCents: 3,
    reason: 'undone',
    writtenOffBy: 'ada',
    reversalOf: first,
    at,
  });
  await recordWriteOff(db, {
    account: 'default',
    currency: 'CAD',
    amountCents: 4,
    reason: 'rounding',
    writtenOffBy: 'ada',
    at,
  });
  await recordWriteOff(db, {
    account: 'default',
    currency: 'USD',
    amountCents: 7,
    reason: 'rounding',
    writtenOffBy: 'ada',
    at,
  });
  await recordWriteOff(db, {
    account: 'beta',
    currency: 'USD',
    amountCents: 2,
    reason: 'beta rounding',
    writtenOffBy: 'bo',
    at,
  });
}

beforeAll(async () => {
  ({ h, server } = await startWorkbench({ seed, users: ['ada', 'olga', 'vic'] }));
  beta = await tokenHeader(h.db, { name: 'beta-ops', role: 'operator', accounts: ['beta'] });
  betaAdmin = await tokenHeader(h.db, { name: 'beta-admin', role: 'admin', accounts: ['beta'] });
  admin = await sessionOf(server, 'ada');
  op = await sessionOf(server, 'olga');
  viewer = await sessionOf(server, 'vic');
}, 60_000);
afterAll(() => stopWorkbench({ h, server }));

/** Polls a preview until it is no longer running. */
async function settled(id: string, headers: Record<string, string>) {
  for (let i = 0; i < 300; i++) {
    const r = await call(server.base, 'GET', `/api/tolerances/previews/${id}`, { headers });
    if (r.json.status !== 'running') return r;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`preview ${id} still running after 30 s`);
}

const CAD_PROPOSAL = {
  note: 'the bank rounds',
  tolerances: [{ currency: 'cad', amount_tolerance_cents: 1, write_off_limit_cents: 5 }],
};

describe('tolerances in the workbench', () => {
  it('shows each account’s version in force and its history, within the caller’s accounts', async () => {
    const all = await call(server.base, 'GET', '/api/tolerances', { headers: as(viewer) });
    expect(all.status).toBe(200);
    expect(
      all.json.accounts.map((a: { account: string; version: number }) => [a.account, a.version]),
    ).toEqual([
      ['beta', 1],
      ['default', 0],
    ]);
    expect(all.json.accounts[0]).toMatchObject({
      currencies: [{ currency: 'USD', amountCents: 2, dateLagBusinessDays: 1, writeOffLimitCents: 10 }],
      history: [
        {
          version: 1,
          currency: 'USD',
          amount_tolerance_cents: 2,
          set_by: 'cli:bo',
          note: 'beta rounds',
          settings_id: null,
        },
      ],
    });
    const scoped = await call(server.base, 'GET', '/api/tolerances', { headers: beta });
    expect(scoped.json.accounts.map((a: { account: string }) => a.account)).toEqual(['beta']);
    const widened = await call(server.base, 'GET', '/api/tolerances?account=default', { headers: beta });
    expect(widened.json.accounts).toEqual([]);
    const page = await call(server.base, 'GET', '/tolerances', { headers: beta });
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="account-beta"');
    expect(page.text).not.toContain('id="account-default"');
    expect(page.text).toContain('beta rounds');
    // A viewer reads; proposing is offered to operators.
    expect((await call(server.base, 'GET', '/tolerances', { headers: as(viewer) })).text).not.toContain(
      'id="propose"',
    );
    expect((await call(server.base, 'GET', '/tolerances', { headers: as(op) })).text).toContain(
      'id="propose"',
    );
  });

  it('lists a month’s write-offs with totals per currency, and the CSV the CLI writes', async () => {
    const r = await call(server.base, 'GET', '/api/write-offs?month=2026-03', { headers: as(viewer) });
    expect(r.status).toBe(200);
    expect(r.json.totals).toEqual([
      { currency: 'CAD', count: 3, net_cents: 4, reversals: 1 },
      { currency: 'USD', count: 2, net_cents: 9, reversals: 0 },
    ]);
    const scoped = await call(server.base, 'GET', '/api/write-offs?month=2026-03', { headers: beta });
    expect(scoped.json.totals).toEqual([{ currency: 'USD', count: 1, net_cents: 2, reversals: 0 }]);
    expect(scoped.json.lines.map((l: { account: string }) => l.account)).toEqual(['beta']);

    const csv = await call(server.base, 'GET', '/api/write-offs.csv?month=2026-03', { headers: as(viewer) });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const dir = mkdtempSync(join(tmpdir(), 'write-offs-'));
    try {
      const cli = await recon(h.connectionString, [
        'write-offs',
        '--month',
        '2026-03',
        '--csv',
        join(dir, 'w.csv'),
      ]);
      expect(cli.code).toBe(0);
      expect(csv.text).toBe(readFileSync(join(dir, 'w.csv'), 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const betaCsv = await call(server.base, 'GET', '/api/write-offs.csv?month=2026-03', { headers: beta });
    expect(betaCsv.text.trim().split('\r\n')).toHaveLength(2);

    const page = await call(server.base, 'GET', '/write-offs?month=2026-03', { headers: as(viewer) });
    expect(page.status).toBe(200);
    const totals = page.text.slice(page.text.indexOf('id="write-off-totals"'), page.text.indexOf('</ul>'));
    expect(totals).toMatch(
      /CAD<\/strong>\s*<span class="money">0\.04&nbsp;CAD<\/span> net in 3\s*write-offs, 1 of them reversals/,
    );
    expect(totals).toMatch(
      /USD<\/strong>\s*<span class="money">0\.09&nbsp;USD<\/span> net in 2\s*write-offs\s*<\/li>/,
    );
    expect(page.text).toContain('href="/api/write-offs.csv?month=2026-03"');
    expect(
      (await call(server.base, 'GET', '/api/write-offs?month=2026-13', { headers: as(viewer) })).status,
    ).toBe(400);
    const bad = await call(server.base, 'GET', '/write-offs?month=March', { headers: as(viewer) });
    expect([bad.status, bad.headers.get('content-type')]).toEqual([
      400,
      expect.stringMatching(/^text\/html/),
    ]);
  });
});

describe('the preview in the workbench', () => {
  let settingsId: number;

  it('refuses a viewer, a request without the CSRF token, another account’s proposal, and a wrong one', async () => {
    const post = (headers: Record<string, string>, body: unknown) =>
      call(server.base, 'POST', '/api/tolerances/previews', { headers, body });
    expect((await post(as(viewer), CAD_PROPOSAL)).status).toBe(403);
    expect((await post({ cookie: op.cookie }, CAD_PROPOSAL)).status).toBe(403);
    const other = await post(beta, { tolerances: [{ account: 'default', currency: 'CAD' }] });
    expect([other.status, other.json.message]).toEqual([400, expect.stringContaining('not one of yours')]);
    const both = await post(as(op), { ...CAD_PROPOSAL, settings_file: '{}' });
    expect([both.status, both.json.message]).toEqual([400, expect.stringContaining('not both')]);
    const limit = await post(as(op), {
      tolerances: [{ currency: 'CAD', amount_tolerance_cents: 5, write_off_limit_cents: 5 }],
    });
    expect([limit.status, limit.json.message]).toEqual([
      400,
      expect.stringContaining('is not above the amount'),
    ]);
    const file = await post(as(op), { settings_file: 'not json' });
    expect([file.status, file.json.message]).toEqual([
      400,
      expect.stringContaining('the settings file: not JSON'),
    ]);
  });

  it('runs a preview in the background and shows what would change and how it agrees with people', async () => {
    const before = await sql<{ n: number }>`select count(*)::int as n from discrepancy_events`.execute(h.db);
    const started = await call(server.base, 'POST', '/api/tolerances/previews', {
      headers: as(op),
      body: CAD_PROPOSAL,
    });
    expect(started.status).toBe(202);
    expect(started.json).toMatchObject({ status: 'running', by: 'olga', accounts: ['default'] });
    expect(started.json.page).toBe(`/tolerances/previews/${started.json.preview_id}`);
    const done = await settled(started.json.preview_id, as(viewer));
    expect(done.json.status).toBe('done');
    const p = done.json.preview;
    expect(
      p.totals
        .filter((t: { kind: string }) => t.kind === 'amount_mismatch')
        .map((t: { change: string; count: number; cents: number }) => [t.change, t.count, t.cents]),
    ).toEqual([
      ['agree', 1, 9],
      ['close', 1, 1],
      ['write_off', 1, 3],
    ]);
    expect(
      p.items.map((i: { change: string; discrepancy_key: string }) => [i.change, i.discrepancy_key]),
    ).toEqual(
      expect.arrayContaining([
        ['write_off', 'amount_mismatch:T-A3'],
        ['close', 'amount_mismatch:T-A1'],
        ['agree', 'amount_mismatch:T-A9'],
      ]),
    );
    settingsId = p.settingsId;
    const after = await sql<{ n: number }>`select count(*)::int as n from discrepancy_events`.execute(h.db);
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
    const rec = await h.db
      .selectFrom('reconcile_settings')
      .selectAll()
      .where('settings_id', '=', settingsId)
      .executeTakeFirstOrThrow();
    expect(rec).toMatchObject({ previewed_by: 'olga', applied_by: null });

    // The page: the counts, the agreement, and the Apply button for an admin only.
    const page = await call(server.base, 'GET', done.json.page, { headers: as(admin) });
    expect(page.text).toMatch(
      /id="agreement">\s*People's decisions: <strong>1<\/strong> agree,\s*<strong>0<\/strong> disagree/,
    );
    expect(page.text).toContain(`data-api="/api/tolerances/settings/${settingsId}/apply"`);
    const opPage = await call(server.base, 'GET', done.json.page, { headers: as(op) });
    expect(opPage.text).toContain('id="apply-needs-admin"');
    expect(opPage.text).not.toContain('id="apply"');
    // Another account's caller does not see it.
    expect(
      (
        await call(server.base, 'GET', `/api/tolerances/previews/${started.json.preview_id}`, {
          headers: beta,
        })
      ).status,
    ).toBe(404);
    expect((await call(server.base, 'GET', done.json.page, { headers: beta })).status).toBe(404);
  });

  it('is applied by an admin only, once, recorded with who applied it', async () => {
    const apply = (headers: Record<string, string>, id = settingsId) =>
      call(server.base, 'POST', `/api/tolerances/settings/${id}/apply`, { headers, body: {} });
    expect((await apply(as(op))).status).toBe(403);
    expect((await apply(as(viewer))).status).toBe(403);
    expect((await apply(betaAdmin)).status).toBe(404);
    expect((await apply(as(admin), 999_999)).status).toBe(404);
    const r = await apply(as(admin));
    expect([r.status, r.json]).toEqual([200, { settings_id: settingsId, versions: { default: 1 } }]);
    const again = await apply(as(admin));
    expect([again.status, again.json.message]).toEqual([400, expect.stringContaining('applied already')]);
    const rec = await h.db
      .selectFrom('reconcile_settings')
      .selectAll()
      .where('settings_id', '=', settingsId)
      .executeTakeFirstOrThrow();
    expect(rec.applied_by).toBe('ada');
    const t = await call(server.base, 'GET', '/api/tolerances?account=default', { headers: as(viewer) });
    expect(t.json.accounts[0]).toMatchObject({
      version: 1,
      currencies: [{ currency: 'CAD', amountCents: 1, dateLagBusinessDays: 0, writeOffLimitCents: 5 }],
      history: [{ version: 1, set_by: 'ada', note: 'the bank rounds', settings_id: settingsId }],
    });
  });

  it('says it is running while it waits for a reconcile run, and refuses a second one meanwhile', async () => {
    let id = '';
    // A reconcile run holding the lock: the preview waits for it, as a run would.
    await h.db.transaction().execute(async (trx) => {
      await sql`lock table recon_work.reconcile_lock in exclusive mode`.execute(trx);
      const started = await call(server.base, 'POST', '/api/tolerances/previews', {
        headers: as(op),
        body: CAD_PROPOSAL,
      });
      id = started.json.preview_id;
      await new Promise((resolve) => setTimeout(resolve, 300));
      const running = await call(server.base, 'GET', `/api/tolerances/previews/${id}`, { headers: as(op) });
      expect(running.json).toMatchObject({ status: 'running', finished_at: null, preview: null });
      const page = await call(server.base, 'GET', `/tolerances/previews/${id}`, { headers: as(op) });
      expect(page.text).toContain('<meta http-equiv="refresh" content="2" />');
      expect(page.text).toMatch(/id="preview-running"[^>]*>\s*Running since/);
      const second = await call(server.base, 'POST', '/api/tolerances/previews', {
        headers: as(admin),
        body: CAD_PROPOSAL,
      });
      expect([second.status, second.json.message]).toEqual([
        409,
        `preview ${id} is running: wait until it is done (its page shows when), then preview again`,
      ]);
    });
    expect((await settled(id, as(op))).json.status).toBe('done');
    const page = await call(server.base, 'GET', `/tolerances/previews/${id}`, { headers: as(op) });
    expect(page.text).not.toContain('http-equiv="refresh"');
  });

  it('takes the settings file the CLI reads, and runs one preview at a time', async () => {
    const text = JSON.stringify({
      tolerances: [{ account: 'beta', currency: 'USD', amount_tolerance_cents: 3 }],
    });
    const started = await call(server.base, 'POST', '/api/tolerances/previews', {
      headers: beta,
      body: { settings_file: text },
    });
    expect(started.status).toBe(202);
    expect((await settled(started.json.preview_id, beta)).json).toMatchObject({
      status: 'done',
      by: 'token:beta-ops',
      accounts: ['beta'],
    });

    const jobs = createPreviewJobs(h.db, undefined);
    const first = jobs.start(parseSettingsFile(text, 'a'), 'x');
    expect(() => jobs.start(parseSettingsFile(text, 'b'), 'y')).toThrow(PreviewBusy);
    await jobs.settled();
    expect(jobs.get(first.id)?.status).toBe('done');

    // A preview that cannot reach the warehouse fails with a message to act on; the log has why.
    const lines: string[] = [];
    const nowhere = createDatabase(createPool('postgres://recon@127.0.0.1:1/recon', 1));
    try {
      const failed = createPreviewJobs(nowhere, undefined, (line) => lines.push(line));
      const job = failed.start(parseSettingsFile(text, 'c'), 'z');
      await failed.settled();
      expect(failed.get(job.id)).toMatchObject({
        status: 'failed',
        message: 'the preview failed (the server log says why); nothing was written: run it again',
      });
      expect(lines.some((l) => l.startsWith(`workbench: preview ${job.id}: `))).toBe(true);
    } finally {
      await nowhere.destroy();
    }
  });

  it('documents the routes in the OpenAPI document', async () => {
    const doc = (await call(server.base, 'GET', '/api/openapi.json')).json;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/tolerances',
        '/api/write-offs',
        '/api/write-offs.csv',
        '/api/tolerances/previews',
        '/api/tolerances/previews/{id}',
        '/api/tolerances/settings/{id}/apply',
      ]),
    );
  });
});
