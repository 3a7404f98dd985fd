import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/config.ts';
import { createProviderClient, type ProviderClient } from '../../provider/client/index.ts';
import { defaultAsOf } from '../../sandbox/history.ts';
import { startSandbox, type Sandbox } from '../../sandbox/server.ts';

/**
 * The sandbox's status answer and its reports see the provider at the same instant. Without an asOf
 * set, the reports answer as of the history's default (the end of its last day plus 30 days), and so
 * must the status answer: `recon demo`'s nightly follow-up asks it, and a transaction still PENDING at
 * that instant is planted as stuck_pending in the ground truth (sandbox/merchant-view/pending.ts).
 * Answered as of the far future, it settled, and the demo scored "found 1880 of 1881".
 */

let sandbox: Sandbox;
let client: ProviderClient;

beforeAll(async () => {
  sandbox = await startSandbox({
    seed: 'status-as-of',
    transactions: 3000,
    from: '2026-04-01',
    to: '2026-09-30',
  });
  client = createProviderClient(loadConfig(sandbox.env()), { env: {}, baseDelayMs: 5 });
});
afterAll(async () => {
  await client?.close();
  await sandbox?.close();
});

describe('the sandbox transaction status, without an asOf', () => {
  it('is the status the reports give: PENDING for a transaction settled after the default asOf', async () => {
    const asOfUs = Date.parse(defaultAsOf(sandbox.history.options)) * 1000;
    const late = [...sandbox.history.facts()].find((f) => f.settledAtMicros > asOfUs);
    expect(late, 'a transaction settling after the default asOf').toBeDefined();
    const reported = [...sandbox.history.transactions()].find(
      (t) => t.transaction_id === late!.transactionId,
    );
    expect(reported?.status).toBe('PENDING');
    const answer = (await client.transactionStatus(late!.transactionId)) as {
      transaction: { transactionStatus: string };
    };
    expect(answer.transaction.transactionStatus).toBe('PENDING');
  });
});
