import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { copyPipelined } from './copy-pipelined.ts';
import { PROFILE, writeProfileLine } from '../../observability/profile.ts';
import { beginLoadTransaction } from './load-statements.ts';
import type { MergeTarget } from './merge-kinds.ts';
import type { MergeResult } from './merge-staging.ts';
import type { ChunkKeys } from './noted-keys.ts';
import type { StagingTables } from './staging.ts';

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

/**
 * The load's ONE transaction, on a pool connection of its own, merging staged batches in file order
 * while the caller parses and stages the next batch: PostgreSQL merges on one core while Node and the
 * COPY backend work on the other. Nothing is visible to others before {@link commit}; {@link abort}
 * rolls every batch back. Batches are merged one at a time in submission order, so the last occurrence
 * of a key in the file is the one that stays. Chunks of new rows ({@link copyChunk}) queue in the same
 * order, on the same connection. The merges of staged rows are Kysely's (merge-kinds.ts), imported
 * with it when a batch has rows to merge: a load of new rows alone writes through node-postgres.
 */
export class BatchMerger {
  private client: pg.PoolClient | undefined;
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
      const client = await this.transaction();
      try {
        // Each COPY ends its query: a COPY followed by other statements in the same simple query
        // cost the server 1-2 µs more per row (docs/benchmark-record.md §3).
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
  inTransaction<T>(step: (trx: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.queue(async () => step(await this.transaction()));
  }

  /** Waits for the last merge, runs `last` in the transaction, and commits. */
  async commit<T>(last: (trx: pg.PoolClient) => Promise<T>): Promise<T> {
    await this.pending;
    const client = await this.transaction();
    const value = await last(client);
    this.client = undefined;
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
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    try {
      await client.query('rollback');
      client.release();
    } catch (error) {
      // A connection that cannot roll back is not handed to the next user of the pool.
      client.release(error as Error);
    }
  }

  private async merge(batch: StagingTables): Promise<void> {
    const client = await this.transaction();
    // The whole file's kinds are submitted after the last batch, most often empty.
    if (batch.empty) return;
    const { mergeBatch } = await import('./merge-kinds.ts');
    const r = await mergeBatch(client, batch, this.target);
    this.result.inserted += r.inserted;
    this.result.updated += r.updated;
    if (!r.allNew) this.keysAhead = false;
  }

  /** The load's transaction, begun on first use on a connection of its own (load-statements.ts). */
  private async transaction(): Promise<pg.PoolClient> {
    this.client ??= await beginLoadTransaction(this.pool, this.target.kinds);
    return this.client;
  }
}
