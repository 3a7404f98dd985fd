/**
 * The statuses a discrepancy has (discrepancies.status). Apart from the row (row.ts), which builds
 * SQL: the command line's options name them, and `recon --help` loads no database library
 * (cli/program.ts, test/unit/cli-start.test.ts).
 */
export const DISCREPANCY_STATUSES = ['open', 'acknowledged', 'resolved'] as const;
export type DiscrepancyStatus = (typeof DISCREPANCY_STATUSES)[number];
