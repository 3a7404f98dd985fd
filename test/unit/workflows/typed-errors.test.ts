import { describe, expect, it } from 'vitest';
import { withFailureMapping } from '../../../activities/failure-mapping.ts';
import { windowSummary } from '../../../activities/reconcile/reconcile-window.ts';
import { beginAccountScope } from '../../../reconcile/account-scope.ts';
import { reconcileRange } from '../../../reconcile/reconcile-range.ts';

// A bad request is refused by a typed error that says retrying cannot help, so Temporal fails the
// activity at once instead of retrying it (the presets retry five times).
describe('the pipeline refuses a bad request with a typed, non-retryable error', () => {
  it('a date window that is not one', async () => {
    const activity = withFailureMapping(() =>
      reconcileRange(undefined as never, { from: '2026-02-30', to: '2026-03-02' }),
    );
    await expect(activity()).rejects.toMatchObject({ type: 'InvalidDateWindow', nonRetryable: true });
  });

  it('an account name that is not one', async () => {
    const activity = withFailureMapping(() => beginAccountScope(undefined as never, "x'; drop"));
    await expect(activity()).rejects.toMatchObject({ type: 'InvalidAccountName', nonRetryable: true });
  });
});

describe('the reconcile summary crosses the activity boundary typed', () => {
  it('carries the run id and the lifecycle as fields, and the same counts flat for older readers', () => {
    const summary = windowSummary(
      { from: '2026-03-01', to: '2026-03-02' },
      {
        runId: 7,
        matched: { transactions: 3, returns: 0, notifications: 1, legacy: 0 },
        lifecycle: { opened: 2, reopened: 0, changed: 1, resolved: 1, unchanged: 4 },
        discrepancies: [{ kind: 'fee_mismatch', currency: 'CAD', count: 2, amount_cents: 50 }],
        totalDiscrepancies: 2,
      },
    );
    expect(summary.run).toEqual({
      runId: 7,
      lifecycle: { opened: 2, reopened: 0, changed: 1, resolved: 1, unchanged: 4 },
    });
    expect(summary.discrepancies).toEqual([
      { kind: 'fee_mismatch', currency: 'CAD', count: 2, amount_cents: 50 },
    ]);
    expect(summary.counts['lifecycle.opened']).toBe(2);
  });
});
