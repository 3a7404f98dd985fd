import type { BackfillProgress } from '../../workflows/types.ts';
import { type BackfillHandle, backfillProgress } from './backfill.ts';
import { renderProgress } from './progress-bar.ts';

export type WatchOutcome =
  | {
      readonly status: 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'TERMINATED' | 'TIMED_OUT';
      readonly progress: BackfillProgress | null;
    }
  | { readonly status: 'DETACHED'; readonly progress: BackfillProgress | null };

/**
 * Shows a backfill's progress on `out` (one redrawn line on a terminal, a line every few seconds
 * otherwise) until it closes or `signal` aborts (Ctrl-C: detach, never cancel). Returns how it ended
 * and the last progress seen.
 */
export async function watchBackfill(
  handle: BackfillHandle,
  options: { out?: NodeJS.WriteStream; intervalMs?: number; signal?: AbortSignal } = {},
): Promise<WatchOutcome> {
  const out = options.out ?? process.stderr;
  const tty = out.isTTY === true;
  const interval = options.intervalMs ?? 500;
  let progress: BackfillProgress | null = null;
  let lastPrinted = 0;
  const draw = (final: boolean) => {
    if (!progress) return;
    const line = renderProgress(progress, Date.now());
    if (tty) out.write(`\r\x1b[2K${line}${final ? '\n' : ''}`);
    else if (final || Date.now() - lastPrinted >= 5000) {
      out.write(`${line}\n`);
      lastPrinted = Date.now();
    }
  };
  for (;;) {
    const description = await handle.describe();
    progress = await backfillProgress(handle).catch(() => progress);
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
