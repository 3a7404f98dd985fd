import { performance } from 'node:perf_hooks';

/**
 * RECON_PROFILE, a developer's switch: `1` prints the time of each step of a load (staging, every
 * merge statement) and of each reconciliation statement on stderr; `explain` also prints each merge
 * statement's executed plan (ingest/load/merge-staging.ts).
 */
export const PROFILE = process.env.RECON_PROFILE;

/** Writes `<ms> ms  <what>` on stderr: the time since `startedAt` (a performance.now() value). */
export function writeProfileLine(startedAt: number, what: string): void {
  process.stderr.write(`${(performance.now() - startedAt).toFixed(0).padStart(6)} ms  ${what}\n`);
}
