import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { toTemporalFailure, withFailureMapping } from '../../../activities/failure-mapping.ts';
import { discrepancyTotals, numericCounts } from '../../../activities/reconcile/reconcile-window.ts';
import { ConfigError } from '../../../domain/errors.ts';
import { nightlyCron } from '../../../workers/client/schedule.ts';
import { ProviderAuthFailed, ProviderUnavailable, RateLimited } from '../../../provider/client/errors.ts';
import { loadWorkerSettings } from '../../../config/worker.ts';

describe('toTemporalFailure', () => {
  it('makes a non-retryable typed error a non-retryable ApplicationFailure named after its class', () => {
    const failure = toTemporalFailure(
      new ProviderAuthFailed('token request refused (401): check RECON_CLIENT_ID and RECON_CLIENT_SECRET', {
        status: 401,
      }),
    ) as ApplicationFailure;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.type).toBe('ProviderAuthFailed');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toBe(
      'token request refused (401): check RECON_CLIENT_ID and RECON_CLIENT_SECRET',
    );
    expect(failure.nextRetryDelay).toBeUndefined();
  });

  it("asks for the rate limit's own delay before the next attempt", () => {
    const failure = toTemporalFailure(
      new RateLimited('report endpoint answered 429', { retryAfterMs: 2500 }),
    ) as ApplicationFailure;
    expect(failure.type).toBe('RateLimited');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBe(2500);
  });

  it('leaves retryable typed errors to the retry policy', () => {
    const failure = toTemporalFailure(
      new ProviderUnavailable('provider answered 503 3 times', { status: 503, attempts: 3 }),
    ) as ApplicationFailure;
    expect([failure.type, failure.nonRetryable, failure.nextRetryDelay]).toEqual([
      'ProviderUnavailable',
      false,
      undefined,
    ]);
  });

  it('passes Temporal failures and unknown errors through unchanged', () => {
    const cancelled = new CancelledFailure('cancelled');
    const app = ApplicationFailure.nonRetryable('x', 'X');
    const plain = new TypeError('boom');
    expect(toTemporalFailure(cancelled)).toBe(cancelled);
    expect(toTemporalFailure(app)).toBe(app);
    expect(toTemporalFailure(plain)).toBe(plain);
  });

  it("cuts consumers' personal data from an unknown error's message and stack (it reaches the history)", () => {
    const pgError = new Error('invalid input syntax for type bigint: "jane.doe@example.com"');
    const failure = toTemporalFailure(pgError) as Error;
    expect(failure).toBe(pgError);
    expect(failure.message).toBe('invalid input syntax for type bigint: "[personal data]"');
    expect(failure.stack).not.toContain('jane.doe@example.com');
  });

  it('wraps an activity', async () => {
    const activity = withFailureMapping(async (n: number) => {
      if (n < 0) throw new ConfigError('RECON_BASE_URL is not set');
      return n * 2;
    });
    await expect(activity(2)).resolves.toBe(4);
    await expect(activity(-1)).rejects.toMatchObject({ type: 'ConfigError', nonRetryable: true });
  });
});

describe('numericCounts', () => {
  it('keeps the counts of a reconciliation summary, not its settings or texts', () => {
    expect(
      numericCounts({
        runId: 7,
        from: '2026-01-01',
        settings: { graceBusinessDays: 3 },
        matched: { transactions: 10, returns: 2 },
        discrepancies: [{ kind: 'fee_mismatch', currency: 'CAD', count: 1, amount_cents: 50 }],
        totalDiscrepancies: 1,
      }),
    ).toEqual({
      runId: 7,
      'matched.transactions': 10,
      'matched.returns': 2,
      totalDiscrepancies: 1,
    });
  });

  it('carries the discrepancies by kind and currency, and tolerates a summary without them', () => {
    const list = [
      { kind: 'fee_mismatch', currency: 'CAD', count: 1, amount_cents: 50 },
      { kind: 'fee_mismatch', currency: 'USD', count: 2, amount_cents: 7 },
      { kind: 'missing_in_ledger', currency: null, count: 1, amount_cents: 0 },
    ];
    expect(discrepancyTotals({ discrepancies: list })).toEqual(list);
    expect(discrepancyTotals({ discrepancies: { fee_mismatch: { count: 1, cents: 50 } } })).toEqual([]);
    expect(discrepancyTotals({})).toEqual([]);
    expect(discrepancyTotals(null)).toEqual([]);
  });
});

describe('settings', () => {
  it('turns the nightly time into a cron expression and refuses malformed times', () => {
    expect(nightlyCron('02:30')).toBe('30 2 * * *');
    expect(nightlyCron('23:05')).toBe('5 23 * * *');
    expect(() => nightlyCron('24:00')).toThrow(
      'nightly time "24:00" is not valid: write it HH:MM, 24-hour, e.g. 02:30',
    );
    expect(() => nightlyCron('2h30')).toThrow(ConfigError);
  });

  it('reads the worker tuning variables with defaults and names a malformed one', () => {
    expect(loadWorkerSettings({})).toEqual({
      maxConcurrentActivityTaskExecutions: 8,
      maxConcurrentWorkflowTaskExecutions: 40,
      maxTaskQueueActivitiesPerSecond: 5,
      shutdownGraceSeconds: 30,
    });
    expect(
      loadWorkerSettings({ RECON_WORKER_ACTIVITY_SLOTS: '3', RECON_PROVIDER_ACTIVITIES_PER_SECOND: '0.5' }),
    ).toMatchObject({ maxConcurrentActivityTaskExecutions: 3, maxTaskQueueActivitiesPerSecond: 0.5 });
    expect(() => loadWorkerSettings({ RECON_WORKER_ACTIVITY_SLOTS: '2.5' })).toThrow(
      'RECON_WORKER_ACTIVITY_SLOTS="2.5" is not valid: set it to a positive whole number',
    );
  });
});
