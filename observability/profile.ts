import { performance } from 'node:perf_hooks';

/** RECON_PROFILE, read in config/profile.ts: the steps that profile check it beside their work. */
export { PROFILE } from '../config/profile.ts';

/** Writes `<ms> ms  <what>` on stderr: the time since `startedAt` (a performance.now() value). */
export function writeProfileLine(startedAt: number, what: string): void {
  process.stderr.write(`${(performance.now() - startedAt).toFixed(0).padStart(6)} ms  ${what}\n`);
}
