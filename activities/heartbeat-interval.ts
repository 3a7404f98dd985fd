import { Context } from '@temporalio/activity';

/**
 * Milliseconds between the heartbeats an activity sends while it has no progress to report:
 * `everySeconds` (default 5), but at most a third of the activity's heartbeat timeout, so that a
 * shortened timeout (workflow input `activityTuning`) is never missed by a live worker.
 */
export function heartbeatIntervalMs(
  everySeconds: number | undefined,
  heartbeatTimeoutMs: number | undefined,
): number {
  const every = (everySeconds ?? 5) * 1000;
  return heartbeatTimeoutMs ? Math.max(100, Math.min(every, Math.floor(heartbeatTimeoutMs / 3))) : every;
}

/**
 * Runs `work` inside the current activity, calling `beat` (a bare heartbeat unless given) every
 * {@link heartbeatIntervalMs} until it ends, however it ends.
 */
export async function whileHeartbeating<T>(
  everySeconds: number | undefined,
  work: () => Promise<T>,
  beat?: () => void,
): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(
    beat ?? (() => ctx.heartbeat()),
    heartbeatIntervalMs(everySeconds, ctx.info.heartbeatTimeoutMs),
  );
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
