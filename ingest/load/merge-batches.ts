import { performance } from 'node:perf_hooks';
import { type Kysely, sql } from 'kysely';
import type pg from 'pg';
import { copyPipelined } from './copy-pipelined.ts';
import { databaseOnClient } from '../../db/database-on-client.ts';
import type { Database } from '../../db/database.ts';
import { type RecordKind, rowSource } from '../../domain/sources.ts';
import { PROFILE, writeProfileLine } from '../../observability/profile.ts';
import {
  lockStatement,
  mergeAdjustments,
  mergeLedger,
  mergeLegacyTransactions,
  type MergeResult,
  mergeReturns,
  mergeTransactions,
} from './merge-staging.ts';
import type { ChunkKeys } from './noted-keys.ts';
import type { StagingTables } from './staging.ts';
import { TARGETS, type Target } from './targets.ts';

/** One COPY of a chunk of new rows: its statement and its COPY text. */
export interface ChunkCopy {
  readonly statement: string;
  readonly data: readonly Buffer[];
}

/** SQLSTATE unique_violation: a key of the chunk is in its table already. */
const UNIQUE_VIOLATION = '23505';

/**
 * While a COPY of new rows runs, the insert triggers of change capture leave its keys to the loader,
 * which notes them itself (noted-keys.ts, migration 0036). Transaction-local, set in the COPY's
 * savepoint: a rollback to it resets the setting, and a COPY that succeeds resets it before release.
 * SET rather than set_config(): the savepoint and the setting share the first COPY's simple query.
 */
const OPEN_SAVEPOINT = `savepoint copy_new_rows; set local recon.keys_noted = 'on'`;
const RELEASE_SAVEPOINT = `set local recon.keys_noted = ''; release savepoint copy_new_rows`;

/** Merge order: fixed, so that two loads touching the same tables take their locks in the same order. */
export const KIND_ORDER: readonly RecordKind[] = [
  'legacy-transaction',
  'transaction',
  'return',
  'adjustment',
  'ledger',
];

/** The load the merger writes for: what it may write, and under which load and account. */
export interface MergeTarget {
  /** The kinds this load may write: their tables are locked all at once, in {@link KIND_ORDER}, by the first merge. */
  readonly kinds: ReadonlySet<RecordKind>;
  readonly loadId: number;
  readonly account: string;
  /** Legacy CSV: rows get the legacy-* sources and never replace report API rows. */
  readonly legacy: boolean;
  /** The input being parsed: a failed merge destroys it, so that the parser stops reading. */
  readonly input: { destroy(error?: Error): unknown };
}

/**
 * The load's ONE transaction, on a pool connection of its own, merging staged batches in file order
 * while the caller parses and stages the next batch: PostgreSQL merges on one core while Node and the
 * COPY backend work on the other. Nothing is visible to others before {@link commit}; {@link abort}
 * rolls every batch back. Batches are merged one at a time in submission order, so the last occurrence
 * of a key in the file is the one that stays. Chunks of new rows ({@link copyChunk}) queue in the same
 * order, on the same connection.
 */
export class BatchMerger {
  private trx: { client: pg.PoolClient; db: Kysely<Database> } | undefined;
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

  private readonly pool: pg.Pool;
  private readonly target: MergeTarget;

  constructor(pool: pg.Pool, target: MergeTarget) {
    this.pool = pool;
    this.target = target;
  }

  /**
   * Ends the batch's COPY and queues its merge after the previous batch's; the caller goes on parsing
   * the next batch while it merges.
   */
  async submit(batch: StagingTables): Promise<void> {
    await batch.endCopy();
    // A failure is kept by queue() and reported by idle, commit or abort.
    void this.queue(() => this.merge(batch));
  }

  /**
   * Writes a chunk of new rows straight into their tables, in a savepoint of the load's transaction,
   * after everything queued before it: the COPYs of `copies`, each sent with its data without waiting
   * for the server (copy-pipelined.ts), then `keys` (the keys of all of them) noted in
   * recon_work.changed_keys and the savepoint released: three round trips for a legacy chunk with its
   * projection (four before), two for a chunk of one COPY. True when all are written (`rows` counted
   * as inserted), false when a key of any of them is stored already (nothing of the chunk stays, its
   * keys neither). Any other error fails the load.
   */
  copyChunk(copies: readonly ChunkCopy[], rows: number, keys: ChunkKeys): Promise<boolean> {
    return this.queue(async () => {
      const t0 = performance.now();
      const { client } = await this.transaction();
      try {
        // Each COPY ends its query: a COPY followed by other statements in the same simple query
        // cost the server 1-2 µs more per row (docs/benchmarks.md, section 3).
        for (const [i, copy] of copies.entries()) {
          const text = i === 0 ? `${OPEN_SAVEPOINT}; ${copy.statement}` : copy.statement;
          await copyPipelined(client, text, copy.data);
        }
        await client.query(`${keys.statements()}${RELEASE_SAVEPOINT}`);
      } catch (error) {
        if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
        await client.query('rollback to savepoint copy_new_rows');
        if (PROFILE) writeProfileLine(t0, `copy of new rows met a stored key: staged instead`);
        return false;
      }
      keys.clear();
      this.result.inserted += rows;
      if (PROFILE) writeProfileLine(t0, `copied ${rows} new rows`);
      return true;
    });
  }

  /**
   * Runs `step` after everything queued before it, and not at all after a failure: the chain stays
   * rejected. A failure stops the parser and fails the load.
   */
  private queue<T>(step: () => Promise<T>): Promise<T> {
    const running = this.pending.then(step);
    running.catch((error: unknown) => {
      this.failure ??= error;
      // The parser stops as on an abort; the load then rethrows this error ({@link failure}).
      this.target.input.destroy(error as Error);
    });
    const done = running.then(() => {});
    // Awaited by idle, commit and abort; until then, a rejection here is not an unhandled one.
    done.catch(() => {});
    this.pending = done;
    return running;
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

  /** Runs `step` in the load's transaction, after everything queued before it. */
  inTransaction<T>(step: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    return this.queue(async () => step((await this.transaction()).db));
  }

  /** Waits for the last merge, runs `last` in the transaction, and commits. */
  async commit<T>(last: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    await this.pending;
    const { client, db } = await this.transaction();
    const value = await last(db);
    this.trx = undefined;
    try {
      await client.query('commit');
    } finally {
      client.release();
    }
    return value;
  }

  /** Lets a running merge end, then rolls back whatever was merged. Never throws. */
  async abort(): Promise<void> {
    await this.pending.catch(() => {});
    const trx = this.trx;
    this.trx = undefined;
    if (!trx) return;
    try {
      await trx.client.query('rollback');
      trx.client.release();
    } catch (error) {
      // A connection that cannot roll back is not handed to the next user of the pool.
      trx.client.release(error as Error);
    }
  }

  private async merge(batch: StagingTables): Promise<void> {
    const { db } = await this.transaction();
    await batch.prepare((text) => sql.raw(text).execute(db));
    for (const kind of KIND_ORDER) {
      if (!batch.has(kind)) continue;
      const r = await mergeKind(db, kind, batch.tableOf(kind), this.target, batch.carriedOf(kind));
      this.result.inserted += r.inserted;
      this.result.updated += r.updated;
      if (!r.allNew) this.keysAhead = false;
    }
    if (batch.has('rejected')) {
      const { loadId, account } = this.target;
      await sql`insert into rejected_rows (load_id, line_number, raw, reason, account)
        select ${loadId}, line, raw, reason, ${account}::text from ${sql.table(batch.tableOf('rejected'))} order by seq`.execute(
        db,
      );
    }
  }

  /**
   * The load's transaction, begun on first use on a connection of its own: a raw client for the COPY
   * of new rows, and a Kysely on the same client for the merges.
   */
  private async transaction(): Promise<{ client: pg.PoolClient; db: Kysely<Database> }> {
    if (this.trx) return this.trx;
    const client = await this.pool.connect();
    try {
      await client.query('begin');
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
    const db = databaseOnClient(client);
    this.trx = { client, db };
    // The merge's hash joins (the seq of every new row of a first load) and the adjustments' window
    // sort: in memory rather than spilled to disk.
    await sql`set local work_mem = '256MB'`.execute(db);
    // Every table the load may write, before the first batch: a later batch meeting a kind that the
    // first did not hold must not take a lock out of order (two loads could deadlock).
    const tables = new Set<Target['table']>();
    for (const kind of KIND_ORDER) {
      if (!this.target.kinds.has(kind)) continue;
      tables.add(TARGETS[kind].table);
      if (kind === 'legacy-transaction') tables.add(TARGETS.transaction.table);
    }
    for (const table of tables) {
      await sql`${sql.raw(lockStatement({ table }))}`.execute(db);
    }
    return this.trx;
  }
}

/** Merges the staged rows of one kind of one batch into the warehouse (in the load's transaction). */
function mergeKind(
  db: Kysely<Database>,
  kind: RecordKind,
  staging: string,
  { loadId, account, legacy }: MergeTarget,
  carried: readonly string[] | undefined,
): Promise<MergeResult> {
  switch (kind) {
    case 'transaction':
      return mergeTransactions(db, staging, loadId, account, rowSource(kind, legacy), carried);
    case 'return':
      return mergeReturns(db, staging, loadId, account, rowSource(kind, legacy), carried);
    case 'legacy-transaction':
      return mergeLegacyTransactions(db, staging, loadId, account, carried);
    case 'adjustment':
      return mergeAdjustments(db, staging, loadId, account);
    case 'ledger':
      return mergeLedger(db, staging, loadId, account, carried);
  }
}
