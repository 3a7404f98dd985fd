import { readdirSync, readFileSync } from 'node:fs';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { installRuntime } from '../../workers/runtime.ts';

/**
 * Replays the recorded histories of test/histories (re-record: `node test/workflows/record-histories.ts`)
 * against the current workflow code. A change that would break running workflows (another command
 * order, a renamed activity, a removed child) fails here, before it reaches a cluster.
 */
const dir = new URL('../histories/', import.meta.url);

/**
 * The recorded proto3 JSON back to a History message. Not historyFromJSON: in SDK 1.24.0 it fails
 * with "type must be a Type" (@temporalio/common bundles protobufjs 8, @temporalio/proto uses 7).
 */
function historyFromJSON(json: unknown) {
  return proto.temporal.api.history.v1.History.fromObject(json as Record<string, unknown>);
}
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort();

describe('workflow histories replay deterministically', () => {
  it('has the window, backfill (both runs of a continue-as-new) and nightly histories, and their per-account runs', () => {
    expect(files).toEqual([
      'backfill-accounts.json',
      'backfill-first-run.json',
      'backfill.json',
      'nightly-accounts.json',
      'nightly.json',
      'window-accounts.json',
      'window.json',
    ]);
  });

  it('replays every recorded history without a nondeterminism error', async () => {
    installRuntime({ level: 'ERROR' });
    const histories = files.map((file) => ({
      workflowId: file.replace(/\.json$/, ''),
      history: historyFromJSON(JSON.parse(readFileSync(new URL(file, dir), 'utf8'))),
    }));
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories(
      { workflowBundle: { codePath: inject('workflowBundlePath') } },
      histories,
    )) {
      replayed++;
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
    expect(replayed).toBe(7);
  });
});
