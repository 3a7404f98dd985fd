import { type ControlledTransaction, type Kysely, sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { RecordKind } from '../../domain/sources.ts';
import { lockStatement, type MergeResult } from './merge-staging.ts';
import type { StagingTables } from './staging.ts';
import { TARGETS, type Target } from './targets.ts';

/** Merge order: fixed, so that two loads touching the same tables take their locks in the same order. */
export const KIND_ORDER: readonly RecordKind[] = [
  'legacy-transaction',
  'transaction',
  'return',
  'adjustment',
  'ledger',
];

/** Merges the staged rows of one kind of one batch into the warehouse (in the load's transaction). */
export type MergeKind = (trx: Kysely<Database>, kind: RecordKind, staging: string) => Promise<MergeResult>;

export interface MergeSteps {
  /** The kinds this load may write: their tables are locked all at once, in {@link KIND_ORDER}, by the first merge. */
  readonly kinds: ReadonlySet<RecordKind>;
  readonly mergeKind: MergeKind;
  /** Copies a batch's rejected rows to rejected_rows (in the load's transaction). */
  readonly insertRejected: (trx: Kysely<Database>, staging: string) => Promise<void>;
  /** Called when a merge fails while the caller is still parsing: it should stop reading. */
  readonly onFailure: (error: unknown) => void;
}

/**
 * The load's ONE transaction, on a pool connection of its own, merging staged batches in file order
 * while the caller parses and stages the next batch: PostgreSQL merges on one core while Node and the
 * COPY backend work on the other. Nothing is visible to others before {@link commit}; {@link abort}
 * rolls every batch back. Batches are merged one at a time in submission order, so the last occurrence
 * of a key in the file is the one that stays.
 */
export class BatchMerger {
  private trx: ControlledTransaction<Database> | undefined;
  private pending: Promise<void> = Promise.resolve();
  readonly result: MergeResult = { inserted: 0, updated: 0 };
  /**
   * True while every batch merged held only keys past the stored ones (a first load of a file in key
   * order). Once a batch met stored keys, the caller stages the rest of the file as one last batch:
   * one join over the table then finds them, instead of one index probe per row and batch.
   */
  private keysAhead = true;
  /** The error of a failed merge: the one to report, whatever the parser then threw. */
  failure: unknown;

  private readonly db: Kysely<Database>;
  private readonly steps: MergeSteps;

  constructor(db: Kysely<Database>, steps: MergeSteps) {
    this.db = db;
    this.steps = steps;
  }

  /**
   * Ends the batch's COPY and queues its merge after the previous batch's; the caller goes on parsing
   * the next batch while it merges.
   */
  async submit(batch: StagingTables): Promise<void> {
    await batch.endCopy();
    const merging = this.pending.then(() => this.merge(batch));
    merging.catch((error: unknown) => {
      this.failure ??= error;
      this.steps.onFailure(error);
    });
    this.pending = merging;
  }

  /** Whether the next batch should be cut: see {@link keysAhead}. */
  get batching(): boolean {
    return this.keysAhead;
  }

  /** Waits for the merges queued so far; then whether to cut the next batch ({@link batching}). */
  async idle(): Promise<boolean> {
    await this.pending.catch(() => {});
    return this.keysAhead;
  }

  /** Waits for the last merge, runs `last` in the transaction, and commits. */
  async commit<T>(last: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    await this.pending;
    const trx = await this.transaction();
    const value = await last(trx);
    this.trx = undefined;
    await trx.commit().execute();
    return value;
  }

  /** Lets a running merge end, then rolls back whatever was merged. Never throws. */
  async abort(): Promise<void> {
    await this.pending.catch(() => {});
    const trx = this.trx;
    this.trx = undefined;
    await trx
      ?.rollback()
      .execute()
      .catch(() => {});
  }

  private async merge(batch: StagingTables): Promise<void> {
    const trx = await this.transaction();
    await batch.prepare((text) => sql.raw(text).execute(trx));
    for (const kind of KIND_ORDER) {
      if (!batch.has(kind)) continue;
      const r = await this.steps.mergeKind(trx, kind, batch.tableOf(kind));
      this.result.inserted += r.inserted;
      this.result.updated += r.updated;
      if (!r.allNew) this.keysAhead = false;
    }
    if (batch.has('rejected')) await this.steps.insertRejected(trx, batch.tableOf('rejected'));
  }

  private async transaction(): Promise<ControlledTransaction<Database>> {
    if (this.trx) return this.trx;
    const trx = await this.db.startTransaction().execute();
    this.trx = trx;
    // The merge's hash joins (the seq of every new row of a first load) and the adjustments' window
    // sort: in memory rather than spilled to disk.
    await sql`set local work_mem = '256MB'`.execute(trx);
    // Every table the load may write, before the first batch: a later batch meeting a kind that the
    // first did not hold must not take a lock out of order (two loads could deadlock).
    const tables = new Set<Target['table']>();
    for (const kind of KIND_ORDER) {
      if (!this.steps.kinds.has(kind)) continue;
      tables.add(TARGETS[kind].table);
      if (kind === 'legacy-transaction') tables.add(TARGETS.transaction.table);
    }
    for (const table of tables) {
      await sql`${sql.raw(lockStatement({ table }))}`.execute(trx);
    }
    return trx;
  }
}
