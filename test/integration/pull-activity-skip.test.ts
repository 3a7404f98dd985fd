import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PullRequest } from '../../activities/dependencies.ts';
import { createPullSource } from '../../activities/ingest/pull-source.ts';
import { loadConfig } from '../../config/config.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { recordCommittedLoad } from '../support/committed-load.ts';
import type { LoadSummary, PullSummary } from '../../domain/load-summary.ts';
import { createTestDatabase } from '../support/database.ts';

/**
 * The pull activity returns the one load summary shape: a pull this workflow run already committed
 * is read back from `loads` (db/loads.ts) with the same counts, without pulling again.
 */
let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
});
afterAll(async () => h?.close());

describe('pull activity', () => {
  it('returns the committed load of this run again, counted as unchanged, without pulling', async () => {
    const calls: PullRequest[] = [];
    const pullSource = async (deps: { handle: DatabaseHandle }, req: PullRequest): Promise<LoadSummary> => {
      calls.push(req);
      return recordCommittedLoad(deps.handle.db, req, {
        rowsRead: 7,
        rowsLoaded: 6,
        rowsRejected: 1,
        rowsInserted: 4,
        rowsUpdated: 2,
        fileSha256: 'a'.repeat(64),
        bytes: 1234,
        zipped: true,
        durationMs: 15,
      });
    };
    const activity = createPullSource({
      handle: h,
      provider: null,
      config: loadConfig({}),
      pullSource,
      reconcileRange: async () => ({}),
    });
    const env = new MockActivityEnvironment({
      workflowExecution: { workflowId: 'window-2026-03-01-2026-03-05', runId: 'run-1' },
    });
    const input = { source: 'report-returns', from: '2026-03-01', to: '2026-03-05' } as const;
    const first: PullSummary = await env.run(activity, input);
    const again: PullSummary = await env.run(activity, input);
    expect(calls).toHaveLength(1);
    expect(first).toEqual({
      ...input,
      loadId: first.loadId,
      status: 'committed',
      rowsRead: 7,
      rowsLoaded: 6,
      rowsRejected: 1,
      rowsInserted: 4,
      rowsUpdated: 2,
      rowsUnchanged: 0,
      skipped: false,
      durationMs: 15,
    });
    expect(again).toEqual({
      ...first,
      rowsInserted: 0,
      rowsUpdated: 0,
      rowsUnchanged: 6,
      skipped: true,
      durationMs: 0,
    });
    // The histories hold these fields in this order.
    expect(Object.keys(again)).toEqual(Object.keys(first));
  });
});
