import { ConfigError } from '../domain/errors.ts';
import { whole } from './volume.ts';

/**
 * The defaults of `recon schedule create` (docs/operations.md): its `--at` and `--lookback-days`
 * win over these when given.
 */
export interface NightlySettings {
  /** RECON_NIGHTLY_AT: the nightly run's time, HH:MM in America/Toronto. */
  readonly at: string;
  /** RECON_NIGHTLY_LOOKBACK_DAYS: days before the scheduled day that each nightly run pulls again. */
  readonly lookbackDays: number;
}

export const DEFAULT_NIGHTLY: NightlySettings = Object.freeze({ at: '02:30', lookbackDays: 3 });

/** A time of day written HH:MM, 00:00 to 23:59 (the form of RECON_NIGHTLY_AT and of `--at`). */
export function isClockTime(value: string): boolean {
  const m = /^(\d{2}):(\d{2})$/.exec(value);
  return m !== null && Number(m[1]) <= 23 && Number(m[2]) <= 59;
}

/** Reads RECON_NIGHTLY_AT and RECON_NIGHTLY_LOOKBACK_DAYS; throws a ConfigError naming a malformed one. */
export function loadNightlySettings(env: NodeJS.ProcessEnv = process.env): NightlySettings {
  const at = env.RECON_NIGHTLY_AT?.trim() || DEFAULT_NIGHTLY.at;
  if (!isClockTime(at)) {
    throw new ConfigError(
      `RECON_NIGHTLY_AT=${JSON.stringify(at)} is not a time: set it to HH:MM in America/Toronto, e.g. 02:30, or unset it (default ${DEFAULT_NIGHTLY.at})`,
    );
  }
  return Object.freeze({
    at,
    lookbackDays: whole(
      env,
      'RECON_NIGHTLY_LOOKBACK_DAYS',
      DEFAULT_NIGHTLY.lookbackDays,
      0,
      3660,
      'a number of days',
    ),
  });
}
