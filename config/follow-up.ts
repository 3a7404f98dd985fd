import { whole } from './volume.ts';

/**
 * Settings of the nightly follow-up of non-final transactions and of stuck_pending
 * (docs/operations.md "Following every transaction until it is final").
 */
export interface FollowUpSettings {
  /** RECON_FOLLOW_UP_DAYS (default 120): how far back a non-final transaction is followed, in days. */
  readonly days: number;
  /** RECON_FOLLOW_UP_PER_NIGHT (default 500): status lookups per account and night, oldest first. */
  readonly perNight: number;
  /** RECON_STUCK_PENDING_DAYS (default 5): business days after which PENDING is stuck_pending. */
  readonly stuckPendingDays: number;
}

export const DEFAULT_FOLLOW_UP: FollowUpSettings = Object.freeze({
  days: 120,
  perNight: 500,
  stuckPendingDays: 5,
});

/** Reads RECON_FOLLOW_UP_DAYS, RECON_FOLLOW_UP_PER_NIGHT and RECON_STUCK_PENDING_DAYS. */
export function loadFollowUpSettings(env: NodeJS.ProcessEnv): FollowUpSettings {
  const d = DEFAULT_FOLLOW_UP;
  return Object.freeze({
    days: whole(env, 'RECON_FOLLOW_UP_DAYS', d.days, 0, 3660, 'a number of days'),
    perNight: whole(env, 'RECON_FOLLOW_UP_PER_NIGHT', d.perNight, 0, 100_000, 'a number of status lookups'),
    stuckPendingDays: whole(
      env,
      'RECON_STUCK_PENDING_DAYS',
      d.stuckPendingDays,
      1,
      365,
      'a number of business days',
    ),
  });
}
