import type { BackfillProgress } from '../../workflows/types.ts';

function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h > 0
    ? `${h}h${String(m).padStart(2, '0')}m`
    : m > 0
      ? `${m}m${String(sec).padStart(2, '0')}s`
      : `${sec}s`;
}

/**
 * One line of backfill progress: a bar of finished windows, windows, rows loaded by finished windows
 * (and rows being read by running ones, from their heartbeats), failures, elapsed time and an
 * estimate of the time left (from the pace of the windows finished so far), then the final reconcile
 * and done.
 */
export function renderProgress(p: BackfillProgress, nowMs: number, width = 24, rowsInFlight = 0): string {
  const finished = p.windowsDone + p.windowsFailed;
  const filled = p.windowsTotal === 0 ? width : Math.floor((finished / p.windowsTotal) * width);
  const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
  const elapsed = nowMs - Date.parse(p.startedAt);
  // Every window loaded is not the end: the backfill then reconciles each window again, in date order
  // (docs/operations.md, "A backfill ends with a final reconcile of its windows"), and said "done"
  // for as long as that took.
  const eta =
    p.windowsLeft === 0
      ? p.finished
        ? 'done'
        : 'final reconcile of the windows'
      : finished === 0
        ? 'estimating'
        : `~${duration((elapsed / finished) * p.windowsLeft)} left`;
  const rate = elapsed > 0 ? Math.round((p.rowsLoaded * 1000) / elapsed) : 0;
  return (
    `[${bar}] ${finished}/${p.windowsTotal} windows` +
    (p.running.length ? ` (${p.running.length} running)` : '') +
    ` | ${p.rowsLoaded.toLocaleString('en-US')} rows (${rate.toLocaleString('en-US')}/s)` +
    (rowsInFlight > 0 ? ` +${rowsInFlight.toLocaleString('en-US')} reading` : '') +
    (p.windowsFailed ? ` | ${p.windowsFailed} failed` : '') +
    accountsPart(p) +
    ` | ${duration(elapsed)} elapsed, ${eta}`
  );
}

/** ` | ca-main 3/3, us-main 1/3 2 failed`: each account's finished windows, when there are several. */
function accountsPart(p: BackfillProgress): string {
  if (!p.accounts || p.accounts.length < 2) return '';
  return ` | ${p.accounts
    .map(
      (a) =>
        `${a.account} ${a.windowsDone + a.windowsFailed}/${a.windowsTotal}` +
        (a.windowsFailed ? ` ${a.windowsFailed} failed` : ''),
    )
    .join(', ')}`;
}
