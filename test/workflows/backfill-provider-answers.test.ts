import { afterEach, describe, expect, it } from 'vitest';
import { useSandboxCluster } from '../support/sandbox-cluster.ts';

/**
 * `recon backfill` when the provider answers something that is not its data, with HTTP 200 (issue 25
 * section 4): an HTML "Login expired" page from the legacy interface, an error line, every line with
 * an extra column, a body that ends cleanly too soon. No such window counts as loaded, and the
 * command says so and exits non-zero. The worker runs with a rejected-line limit of 0 per window
 * (RECON_MAX_REJECTED_PER_WINDOW), so that one cut row is over it.
 */
const c = useSandboxCluster({
  name: 'answers',
  sandbox: { seed: 'answers', transactions: 120, from: '2026-03-01', to: '2026-03-20' },
  env: { RECON_MAX_REJECTED_PER_WINDOW: '0' },
});
afterEach(() => c.sandbox.setFaults({}));

async function count(table: 'legacy_transactions' | 'provider_returns' | 'provider_transactions') {
  const row = await c.h.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function legacyLoads() {
  return c.h.db
    .selectFrom('loads')
    .select(['source', 'status', 'error', 'rows_rejected'])
    .where('source', '=', 'legacy-transactions')
    .orderBy('load_id')
    .execute();
}

describe('recon backfill and provider answers that are not data', () => {
  it('exits 1 naming the source, the window and the page when the legacy interface answers an HTML page with 200', async () => {
    c.sandbox.setFaults({ legacyErrorPage: 'login-expired' });
    const { code, stdout, stderr } = await c.recon([
      'backfill',
      '--from',
      '2026-03-01',
      '--to',
      '2026-03-20',
      '--window-days',
      '10',
    ]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain('backfill-2026-03-01-2026-03-20: failed');
    for (const window of ['2026-03-01..2026-03-10', '2026-03-11..2026-03-20']) {
      const line = stderr.split('\n').find((l) => l.startsWith(`failed account default ${window}:`));
      expect(line).toBeDefined();
      expect(line).toContain(`legacy-transactions ${window}: the provider's answer is not a report`);
      expect(line).toContain('<title>Login expired</title>');
    }
    // The page's hidden token is a secret: never echoed.
    expect(stderr).not.toContain('a1b2c3d4e5f6');
    expect(await count('legacy_transactions')).toBe(0);
    const loads = await legacyLoads();
    expect(loads.length).toBeGreaterThan(0);
    expect(loads.every((l) => l.status === 'failed')).toBe(true);
    expect(loads[0]!.error).toContain('NotAReport');
    const rejected = await c.h.db.selectFrom('rejected_rows').select('raw').execute();
    expect(rejected).toEqual([]);
  });

  it('exits 1 when the legacy interface answers `Error: invalid merchant_pass` with 200', async () => {
    c.sandbox.setFaults({ legacyErrorPage: 'invalid-merchant-pass' });
    const { code, stderr } = await c.recon(['backfill', '--from', '2026-03-01', '--to', '2026-03-10']);
    expect(code).toBe(1);
    expect(stderr).toContain(
      'legacy-transactions 2026-03-01..2026-03-10: the provider\'s answer is not a report (1 line, none of them a record; line 1: expected 21 fields (query type 5, fields 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,20,21,22), found 1); it starts: "Error: invalid merchant_pass"',
    );
    expect(await count('legacy_transactions')).toBe(0);
  });

  it('exits 1 when every legacy line has an extra column', async () => {
    c.sandbox.setFaults({ extraColumn: true });
    const { code, stderr } = await c.recon(['backfill', '--from', '2026-03-01', '--to', '2026-03-10']);
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /legacy-transactions 2026-03-01\.\.2026-03-10: the provider's answer is not a report \(\d+ lines, none of them a record; line 1: expected 21 fields \(query type 5, fields 1,2,[\d,]+\), found 22\)/,
    );
    expect(await count('legacy_transactions')).toBe(0);
  });

  it('exits 1 when a window rejects more lines than RECON_MAX_REJECTED_PER_WINDOW (a body ended cleanly mid-row)', async () => {
    c.sandbox.setFaults({ shortBodyBytes: 700 });
    const { code, stderr } = await c.recon([
      'backfill',
      '--from',
      '2026-03-01',
      '--to',
      '2026-03-10',
      '--sources',
      'legacy-transactions',
    ]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/more than 0 row\(s\) rejected \(RECON_MAX_REJECTED_PER_WINDOW 0\)/);
  });

  it('recon nightly exits 1 naming the source and the page when the legacy interface answers an HTML page', async () => {
    c.sandbox.setFaults({ legacyErrorPage: 'login-expired' });
    const { code, stderr } = await c.recon(['nightly', '--date', '2026-03-18', '--lookback-days', '1']);
    expect(code).toBe(1);
    expect(stderr).toContain('recon: nightly 2026-03-18 failed:');
    expect(stderr).toContain(
      "legacy-transactions 2026-03-17..2026-03-18: the provider's answer is not a report",
    );
    expect(stderr).toContain('<title>Login expired</title>');
    expect(stderr).not.toContain('a1b2c3d4e5f6');
  });

  it('an empty answer stays a valid empty day: exits 0', async () => {
    const { code, stdout } = await c.recon(['backfill', '--from', '2026-05-01', '--to', '2026-05-02']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ windows: 1, rowsRead: 0, rowsRejected: 0 });
  });
});
