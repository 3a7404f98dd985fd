import { type Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { BackfillProgress } from '../../workflows/types.ts';
import { windowWorkflowId } from '../../workflows/windows.ts';
import { type BackfillHandle, backfillProgress } from './backfill.ts';
import { renderProgress } from './progress-bar.ts';

export type WatchOutcome =
  | {
      readonly status: 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'TERMINATED' | 'TIMED_OUT';
      readonly progress: BackfillProgress | null;
    }
  | { readonly status: 'DETACHED'; readonly progress: BackfillProgress | null };

/**
 * Rows read so far by the pulls still running in the backfill's current windows, from their
 * heartbeats (best effort: 0 when a window cannot be described).
 */
export async function rowsInFlight(client: Client, progress: BackfillProgress): Promise<number> {
  let rows = 0;
  for (const window of progress.running) {
    try {
      const { raw } = await client.workflow.getHandle(windowWorkflowId(window)).describe();
      for (const activity of raw.pendingActivities ?? []) {
        const payload = activity.heartbeatDetails?.payloads?.[0];
        if (!payload) continue;
        const details = defaultPayloadConverter.fromPayload<{ rowsRead?: unknown }>(payload);
        if (typeof details?.rowsRead === 'number') rows += details.rowsRead;
      }
    } catch {
      // A window that just closed has no pending activity left to count.
    }
  }
  return rows;
}

/**
 * Shows a backfill's progress on `out` (one redrawn line on a terminal, a line every few seconds
 * otherwise) until it closes or `signal` aborts (Ctrl-C: detach, never cancel). Returns how it ended
 * and the last progress seen.
 */
export async function watchBackfill(
  handle: BackfillHandle,
  options: { out?: NodeJS.WriteStream; intervalMs?: number; signal?: AbortSignal; client?: Client } = {},
): Promise<WatchOutcome> {
  const out = options.out ?? process.stderr;
  const tty = out.isTTY === true;
  const interval = options.intervalMs ?? 500;
  let progress: BackfillProgress | null = null;
  let lastPrinted = 0;
  let inFlight = 0;
  const draw = (final: boolean) => {
    if (!progress) return;
    const line = renderProgress(progress, Date.now(), 24, final ? 0 : inFlight);
    if (tty) out.write(`\r\x1b[2K${line}${final ? '\n' : ''}`);
    else if (final || Date.now() - lastPrinted >= 5000) {
      out.write(`${line}\n`);
      lastPrinted = Date.now();
    }
  };
  for (;;) {
    const description = await handle.describe();
    progress = await backfillProgress(handle).catch(() => progress);
    inFlight = options.client && progress ? await rowsInFlight(options.client, progress) : 0;
    const status = description.status.name;
    if (status !== 'RUNNING' && status !== 'CONTINUED_AS_NEW') {
      draw(true);
      return {
        status:
          status === 'COMPLETED' || status === 'FAILED' || status === 'CANCELLED' || status === 'TERMINATED'
            ? status
            : 'TIMED_OUT',
        progress,
      };
    }
    draw(false);
    const aborted = await new Promise<boolean>((resolve) => {
      if (options.signal?.aborted) return resolve(true);
      const timer = setTimeout(() => resolve(false), interval);
      options.signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve(true);
        },
        { once: true },
      );
    });
    if (aborted) {
      draw(true);
      return { status: 'DETACHED', progress };
    }
  }
}
