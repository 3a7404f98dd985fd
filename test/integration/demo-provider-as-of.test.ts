import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/config.ts';
import { createAccountClient } from '../../provider/client/account-client.ts';
import { type DemoAccounts, startDemoAccounts } from '../../sandbox/demo-accounts.ts';
import { providerAsOf } from '../../sandbox/demo-follow-up.ts';
import { defaultAsOf } from '../../sandbox/history.ts';

/**
 * After its backfill, `recon demo` lets the nightly run see the provider as of each account's ground
 * truth (sandbox/demo-follow-up.ts): a transaction the ground truth saw settled is settled for the
 * run too. The history's default instant is Eastern midnight, an hour before the ground truth's in
 * summer; `recon demo --from 2026-01-15 --to 2026-08-15` has a transaction of ca-main settling in that
 * hour, which the run would have found stuck_pending and the ground truth did not plant.
 */

let dir: string;
let demo: DemoAccounts;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'recon-demo-as-of-'));
  demo = await startDemoAccounts({ from: '2026-01-15', to: '2026-08-15', transactions: 6000, dataDir: dir });
});
afterAll(async () => {
  await demo?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the demo provider after the backfill', () => {
  it('answers as of the ground truth: settled what the ground truth saw settled', async () => {
    const ca = demo.list[0]!;
    const hour = {
      from: Date.parse(defaultAsOf(ca.view.history.options)) * 1000,
      to: Date.parse(ca.view.asOf) * 1000,
    };
    const f = [...ca.view.history.facts()].find(
      (x) => x.settledAtMicros > hour.from && x.settledAtMicros <= hour.to,
    );
    expect(f, 'a transaction settling in the hour between the two instants').toBeDefined();
    const planted = ca.view.providerTransactions.find((t) => t.transaction_id === f!.transactionId);
    expect(planted?.status).not.toBe('PENDING');

    providerAsOf(demo, undefined);
    const client = createAccountClient(loadConfig({}), demo.accounts, demo.accounts.byName(ca.name)!, {
      env: {},
      baseDelayMs: 5,
    });
    try {
      const answer = (await client.transactionStatus(f!.transactionId)) as {
        transaction: { transactionStatus: string };
      };
      expect(answer.transaction.transactionStatus).not.toBe('PENDING');
    } finally {
      await client.close();
    }
  });
});
