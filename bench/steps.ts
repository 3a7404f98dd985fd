/**
 * The shape of a benchmark section. bench/run.ts runs its own ingestion steps, then the steps that
 * bench/matching.ts exports as `steps` (when that file exists), all against one PostgreSQL.
 */
export interface BenchContext {
  /** Temporary directory for generated files; removed at the end, never committed. */
  readonly workDir: string;
  /** Rows per generated file (1,000,000 by default; BENCH_ROWS overrides). */
  readonly rows: number;
  /** A fresh database with every migration applied; returns its connection string. */
  newDatabase(): Promise<string>;
  /** Progress line on stderr. */
  log(message: string): void;
}

export interface BenchResult {
  readonly name: string;
  readonly rows: number;
  readonly seconds: number;
  /** Peak resident set size of the process that did the work, in MiB, when measured. */
  readonly peakRssMiB?: number;
  readonly note?: string;
}

export interface BenchStep {
  readonly name: string;
  /** Left out of a run without BENCH_STEPS (it repeats the other sections at several sizes: hours). */
  readonly onlyWhenNamed?: boolean;
  run(ctx: BenchContext): Promise<BenchResult[]>;
}
