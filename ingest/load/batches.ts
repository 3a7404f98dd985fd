import type pg from 'pg';
import type { RecordKind } from '../../domain/sources.ts';
import type { BatchMerger } from './merge-batches.ts';
import { StagingTables } from './staging.ts';

/**
 * Kinds staged for the whole file and merged after the last batch: identical adjustments are told
 * apart by their occurrence number in the file, which a batch alone cannot count.
 */
const WHOLE_FILE_KINDS: ReadonlySet<RecordKind> = new Set(['adjustment']);

/** Rows already encoded as COPY text (a chunk of new rows that met a stored key), to stage in file order. */
export interface EncodedRows {
  readonly kind: RecordKind;
  /** The columns they were encoded with (what the parser reported then). */
  readonly reported: readonly string[] | undefined;
  readonly seqs: readonly number[];
  readonly lines: readonly number[];
  /** Each row's natural key. */
  readonly keys: readonly string[];
  /** Each row's record columns as COPY text, without the newline. */
  readonly fields: readonly string[];
}

/**
 * The staging of one load: the batch being filled, the tables of the whole file's kinds (merged after
 * every batch), and every staging table made, dropped when the load ends. A batch cut goes to the
 * merger, which merges it while the next one fills.
 */
export class StagedBatches {
  /** Rows counted toward the batch being filled; the load cuts it when they reach its size. */
  inBatch = 0;
  readonly wholeFile: StagingTables;
  private batch: StagingTables;
  private readonly all: StagingTables[] = [];
  private readonly pool: pg.Pool;
  private readonly loadId: number;
  private readonly merger: BatchMerger;

  constructor(pool: pg.Pool, loadId: number, merger: BatchMerger) {
    this.pool = pool;
    this.loadId = loadId;
    this.merger = merger;
    this.wholeFile = this.make('all');
    this.batch = this.make(0);
  }

  /** The batch being filled (rejected rows go to it). */
  get current(): StagingTables {
    return this.batch;
  }

  /** Where a parsed record of `kind` is staged: a promise only when a new batch had to be cut. */
  into(kind: RecordKind, reported: readonly string[] | undefined): StagingTables | Promise<StagingTables> {
    if (WHOLE_FILE_KINDS.has(kind)) return this.wholeFile;
    return this.batch.carriesAs(kind, reported) ? this.batch : this.batchFor(kind, reported);
  }

  /** Hands the batch to the merger and starts the next one. */
  async cut(): Promise<void> {
    await this.merger.submit(this.batch);
    this.batch = this.make(this.all.length - 1);
    this.inBatch = 0;
  }

  /** Stages rows that a COPY of new rows gave back, after everything staged before them. */
  async stageEncoded(rows: EncodedRows): Promise<void> {
    const into = await this.batchFor(rows.kind, rows.reported);
    for (let i = 0; i < rows.seqs.length; i++) {
      const wait = into.addEncoded(rows.kind, rows.seqs[i]!, rows.lines[i]!, rows.keys[i]!, rows.fields[i]!);
      if (wait) await wait;
      this.inBatch++;
    }
  }

  /** After the last row: the last batch, then the whole file's kinds, like one more batch. */
  async submitLast(): Promise<void> {
    if (this.inBatch > 0) await this.merger.submit(this.batch);
    await this.merger.submit(this.wholeFile);
  }

  /** Drops every staging table of the load (never throws: see {@link StagingTables.drop}). */
  async drop(): Promise<void> {
    for (const staging of this.all) await staging.drop();
  }

  /** The batch to stage a row of `kind` in: a new one when the parser's columns changed since. */
  private async batchFor(kind: RecordKind, reported: readonly string[] | undefined): Promise<StagingTables> {
    if (!this.batch.carriesAs(kind, reported)) {
      await this.cut();
      this.batch.carriesAs(kind, reported);
    }
    return this.batch;
  }

  private make(part: number | 'all'): StagingTables {
    const s = new StagingTables(this.pool, this.loadId, part);
    this.all.push(s);
    return s;
  }
}
