/**
 * Tolerances and write-offs (issue 29, docs/finance.md "Tolerances and write-offs"): what other
 * modules call. The tables are migration 0026's `matching_tolerances` and `write_offs`.
 */
export {
  checkTolerance,
  EXACT,
  InvalidTolerance,
  loadTolerances,
  setTolerances,
  toleranceHistory,
  tolerancesOf,
  type Tolerance,
  type ToleranceChange,
  type Tolerances,
} from './tolerance.ts';
export { RECON_ACTOR, recordWriteOff, type WriteOff } from './write-offs.ts';
export { runTolerances } from './run-tolerances.ts';
export { writeOffFindings } from './write-off-findings.ts';
