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
