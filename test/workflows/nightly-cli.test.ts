import { ApplicationFailure } from '@temporalio/common';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { useSandboxCluster } from '../support/sandbox-cluster.ts';

/**
 * `recon nightly --date` as an operator runs it, against a cluster (TEMPORAL_ADDRESS set) and its
 * worker, with the sandbox as the provider: a first night loads transactions still pending, a night
 * two weeks later follows them up to their end; a night whose window fails exits 1.
 */
const FAILING_DAY = '2026-03-27';
const c = useSandboxCluster({
  name: 'nightly-cli',
  sandbox: { seed: 'nightly', transactions: 1500, from: '2026-03-01', to: '2026-03-31' },
  activities: (production) => ({
    ...production,
    pullSource: async (input) => {
      if (input.to === FAILING_DAY)
        throw ApplicationFailure.nonRetryable(
          'the provider answered 500 for this window',
          'ProviderUnavailable',
        );
      return production.pullSource(input);
    },
  }),
});

const pendingCount = async () =>
  Number(
    (
      await c.h.db
        .selectFrom('provider_transactions')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('status', '=', 'PENDING')
        .where('transaction_on', '<=', '2026-03-05')
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('recon nightly --date', () => {
  it('runs a night in the foreground, and a later night follows what was pending to its end', async () => {
    c.sandbox.setAsOf('2026-03-06T07:00:00Z');
    const first = await c.recon(['nightly', '--date', '2026-03-05', '--now', '2026-03-06T07:00:00Z']);
    expect(first.stderr).toContain(`running the nightly run of 2026-03-05 on ${c.server.address}`);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^nightly 2026-03-02\.\.2026-03-05: \d+ row\(s\) loaded\n/);
    const pendingBefore = await pendingCount();
    expect(pendingBefore).toBeGreaterThan(0);

    c.sandbox.setAsOf('2026-03-20T07:00:00Z');
    const later = await c.recon([
      'nightly',
      '--date',
      '2026-03-19',
      '--now',
      '2026-03-20T07:00:00Z',
      '--json',
    ]);
    expect(later.code).toBe(0);
    const result = JSON.parse(later.stdout) as {
      followUp: { account: string; lookedUp: number; settled: number; stillPending: number }[];
    };
    const followUp = result.followUp[0]!;
    expect(followUp.account).toBe('default');
    expect(followUp.lookedUp).toBeGreaterThanOrEqual(pendingBefore);
    expect(followUp.settled).toBeGreaterThan(0);
    expect(followUp.settled + followUp.stillPending).toBe(followUp.lookedUp);
    expect(await pendingCount()).toBe(pendingBefore - followUp.settled);
    const settledByLookup = await c.h.db
      .selectFrom('provider_transactions as p')
      .innerJoin('loads as l', 'l.load_id', 'p.load_id')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('l.source', '=', 'status-lookup')
      .executeTakeFirstOrThrow();
    expect(Number(settledByLookup.n)).toBe(followUp.settled);
  });

  it('a body the provider cut short is loaded without its last record, and recon backfill warns of the rejected row', async () => {
    // Complete at the HTTP level, cut inside a record: within the rejected-line limit (default 100).
    c.sandbox.setAsOf('2026-03-27T07:00:00Z');
    c.sandbox.setFaults({ shortBodyBytes: 700 });
    try {
      const backfill = await c.recon([
        'backfill',
        '--from',
        '2026-03-23',
        '--to',
        '2026-03-24',
        '--sources',
        'legacy-transactions',
      ]);
      expect(backfill.code, backfill.stderr).toBe(0);
      const result = JSON.parse(backfill.stdout) as { rowsRejected: number };
      expect(result.rowsRejected).toBe(1);
      expect(backfill.stderr).toContain(
        'recon: warning: 1 row(s) rejected by the pulls of 2026-03-23..2026-03-24; list them with: recon warehouse psql -- -c "select l.load_id',
      );
      // The printed command lists the rejected row: the record the cut fell in.
      const listing = /psql -- -c "(.*)"$/m.exec(backfill.stderr)![1]!;
      const rows = await sql<{ source: string; reason: string }>`${sql.raw(listing)}`.execute(c.h.db);
      expect(rows.rows).toMatchObject([{ source: 'legacy-transactions' }]);
    } finally {
      c.sandbox.setFaults({});
    }
  });

  it('exits 1 and names the window when a window of the night failed', async () => {
    const run = await c.recon(['nightly', '--date', FAILING_DAY]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`recon: nightly ${FAILING_DAY} failed:`);
    expect(run.stderr).toContain('the provider answered 500 for this window');
  });
});
