import { ConfigError } from '../domain/errors.ts';

/**
 * Settings of the low-volume check (reconcile/volume/, docs/operations.md "Low-volume days"): a
 * business day of a source is flagged when it held fewer than `lowPercent` % of the source's usual
 * rows, the usual figure being the median over the loaded business days among the `baselineDays`
 * business days before it. A source whose usual figure is below `minUsualRows` is not judged (it does
 * not "usually have volume"), nor is a day with fewer than `minHistoryDays` loaded days to compare.
 */
export interface VolumeSettings {
  /** RECON_VOLUME_BASELINE_DAYS: business days before the day that the median is taken over (1..250). */
  readonly baselineDays: number;
  /** RECON_VOLUME_MIN_HISTORY_DAYS: fewest loaded days of the baseline for a judgement (1..baselineDays). */
  readonly minHistoryDays: number;
  /** RECON_VOLUME_MIN_USUAL_ROWS: a usual figure below this is not volume enough to judge (≥ 1). */
  readonly minUsualRows: number;
  /** RECON_VOLUME_LOW_PERCENT: flagged when rows × 100 < usual × this (0..100; 0 turns the check off). */
  readonly lowPercent: number;
}

export const DEFAULT_VOLUME_SETTINGS: VolumeSettings = Object.freeze({
  baselineDays: 20,
  minHistoryDays: 5,
  minUsualRows: 10,
  lowPercent: 25,
});

/** A whole number from the environment within min..max, or `fallback` when unset; a ConfigError names a bad one. */
export function whole(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
  what: string,
): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(
      `${name}=${JSON.stringify(raw)} is not ${what}: set it to a whole number from ${min} to ${max}, or unset it (default ${fallback})`,
    );
  }
  return Number(raw);
}

/** Reads the RECON_VOLUME_* variables; throws a ConfigError naming a malformed one. */
export function loadVolumeSettings(env: NodeJS.ProcessEnv): VolumeSettings {
  const d = DEFAULT_VOLUME_SETTINGS;
  const baselineDays = whole(
    env,
    'RECON_VOLUME_BASELINE_DAYS',
    d.baselineDays,
    1,
    250,
    'a number of business days',
  );
  const minHistoryDays = whole(
    env,
    'RECON_VOLUME_MIN_HISTORY_DAYS',
    Math.min(d.minHistoryDays, baselineDays),
    1,
    baselineDays,
    'a number of business days within RECON_VOLUME_BASELINE_DAYS',
  );
  return Object.freeze({
    baselineDays,
    minHistoryDays,
    minUsualRows: whole(
      env,
      'RECON_VOLUME_MIN_USUAL_ROWS',
      d.minUsualRows,
      1,
      1_000_000_000,
      'a number of rows',
    ),
    lowPercent: whole(env, 'RECON_VOLUME_LOW_PERCENT', d.lowPercent, 0, 100, 'a percentage'),
  });
}
