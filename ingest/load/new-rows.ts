import type { CopyStreamQuery } from 'pg-copy-streams';
import type { Db } from '../../db/database.ts';
import { copyFields, copyTextValue, copyValue } from './copy-text.ts';
import type { CopyChunk } from './merge-batches.ts';
import { attnumsOf, maskBits } from './merge-staging.ts';
import { carriedColumns, TARGETS } from './targets.ts';

/** The kinds whose new rows may be copied straight into their table: one target each, no projection. */
export type NewRowsKind = 'transaction' | 'return';

export const isNewRowsKind = (kind: string): kind is NewRowsKind =>
  kind === 'transaction' || kind === 'return';

/** How new rows of a kind are written straight into their table by COPY ({@link newRowsCopy}). */
export interface NewRowsCopy {
  /** `copy <table> (...) from stdin`: the record's columns ({@link Target.columns}), then the lineage. */
  readonly statement: string;
  /** The columns the load carries: the others are written as null, as the merge leaves them. */
  readonly carried: ReadonlySet<string>;
  /** The columns as the parser reported them (undefined: every column), which `carried` was made of. */
  readonly reported: readonly string[] | undefined;
  /** What follows a row's record columns on its COPY line (with the newline): the same for every row. */
  readonly suffix: string;
}

/**
 * The COPY that writes new rows of `kind` as the merge's insert of a new key would: the same columns,
 * `source`, the load as `load_id` (and `first_load_id`), and `unknown_mask` for what the load's format
 * does not carry. A column the format does not carry is written as null, which is what the insert
 * leaves in it: no record column of these tables has a default (`load-new-rows.test.ts` checks).
 */
export async function newRowsCopy(
  db: Db,
  kind: NewRowsKind,
  loadId: number,
  account: string,
  source: string,
  carriedByFormat?: readonly string[],
): Promise<NewRowsCopy> {
  const t = TARGETS[kind];
  const carried = new Set(carriedColumns(t, carriedByFormat));
  const unknown = t.columns.filter((c) => !carried.has(c));
  const lineage = t.hasFirstLoad ? ['load_id', 'first_load_id'] : ['load_id'];
  const mask =
    t.tracksUnknown && unknown.length > 0 ? maskBits(t, await attnumsOf(db, t.table), unknown) : null;
  const columns = [
    ...t.columns,
    'account',
    'source',
    ...lineage,
    ...(t.tracksUnknown ? ['unknown_mask'] : []),
  ];
  const suffix = [
    account,
    source,
    ...lineage.map(() => loadId),
    ...(t.tracksUnknown ? [mask === null ? null : String(mask)] : []),
  ]
    .map((v) => `\t${copyValue(v)}`)
    .join('');
  return {
    statement: `copy ${t.table} (${columns.join(', ')}) from stdin`,
    carried,
    reported: carriedByFormat,
    suffix: `${suffix}\n`,
  };
}

/** Rows of a chunk that met a stored key, to be staged and merged instead, in file order. */
export interface FallenBack {
  readonly kind: NewRowsKind;
  /** The columns they were encoded with (see {@link NewRowsCopy.reported}). */
  readonly reported: readonly string[] | undefined;
  readonly seqs: readonly number[];
  readonly lines: readonly number[];
  /** Each row's natural key. */
  readonly keys: readonly string[];
  /** Each row's record columns as COPY text, without the newline. */
  readonly fields: readonly string[];
}

/** What a {@link NewRowsWriter} needs of the load. */
export interface NewRowsIo {
  /** Rows per COPY statement (each in a savepoint of its own). */
  readonly chunkRows: number;
  /** Opens a COPY in the load's transaction (`BatchMerger.openCopy`). */
  open(statement: string): Promise<CopyChunk>;
  /** Stages rows for a merge, after everything staged before. */
  stage(rows: FallenBack): Promise<void>;
  /** The COPY for the columns the parser reports now (they changed mid-file). */
  reopen(reported: readonly string[] | undefined): Promise<NewRowsCopy>;
}

/** Bytes of COPY text gathered before one write: few, large writes keep the per-row cost low. */
const FLUSH_CHARS = 64 * 1024;

/**
 * Writes the rows of one kind straight into their table while their keys are new, streaming each
 * row to a COPY as it is parsed: PostgreSQL writes on one core while Node parses on the other, with
 * backpressure between them (a COPY fed in bursts left the server idle half the time). Every
 * {@link NewRowsIo.chunkRows} rows the COPY ends in its own savepoint. What a COPY was sent is kept,
 * as written buffers (off the V8 heap: keeping a string per row cost more in garbage collection than
 * the COPY saved), until it ends. When it meets a stored key (a re-load, a restatement, a key twice in
 * the file), the COPY fails on the primary key and is rolled back to its savepoint; its rows are then
 * staged and merged like any other, and so is the rest of the file ({@link active} false), in file
 * order, so that the last occurrence of a key still wins and nothing is lost.
 */
export class NewRowsWriter {
  readonly kind: NewRowsKind;
  /** False once a COPY met a stored key: the caller stages this kind from then on. */
  active = true;
  private copy: NewRowsCopy;
  private readonly io: NewRowsIo;
  private chunk: CopyChunk | null = null;
  private text = '';
  private sent: Buffer[] = [];
  private seqs: number[] = [];
  private lines: number[] = [];

  constructor(kind: NewRowsKind, copy: NewRowsCopy, io: NewRowsIo) {
    this.kind = kind;
    this.copy = copy;
    this.io = io;
  }

  /**
   * Takes a row of {@link kind} while {@link active}; `reported` is the columns the parser reports
   * now. False (at once or after a wait) when the caller is to stage the row itself, after the rows
   * this writer staged: a COPY met a stored key. A promise only when the row ended a write or a chunk.
   */
  take(
    seq: number,
    line: number,
    record: Readonly<Record<string, unknown>>,
    reported: readonly string[] | undefined,
  ): boolean | Promise<boolean> {
    const chunk = this.chunk;
    if (chunk === null || chunk.failed || reported !== this.copy.reported) {
      return this.takeAfterEnd(seq, line, record, reported);
    }
    this.add(seq, line, record);
    if (this.seqs.length >= this.io.chunkRows) return this.end().then(() => true);
    if (this.text.length >= FLUSH_CHARS) {
      const wait = this.write(chunk);
      if (wait) return wait.then(() => true);
    }
    return true;
  }

  /**
   * Ends the COPY in progress, if any: before the caller waits for the load's connection (it is held
   * by the COPY until then), and after the last row. A COPY that met a stored key is staged.
   */
  async end(): Promise<void> {
    const chunk = this.chunk;
    if (chunk === null) return;
    this.chunk = null;
    // The COPY's end waits for everything written: no need to wait for the write itself.
    if (this.text.length > 0) void this.write(chunk);
    if (await chunk.end(this.seqs.length)) {
      this.sent = [];
      this.seqs = [];
      this.lines = [];
    } else {
      await this.fallBack();
    }
  }

  /** Ends the COPY in progress keeping nothing: the load failed, and its transaction rolls back. */
  async abandon(): Promise<void> {
    const chunk = this.chunk;
    this.chunk = null;
    this.active = false;
    this.sent = [];
    if (chunk) await chunk.end(0).catch(() => {});
  }

  private add(seq: number, line: number, record: Readonly<Record<string, unknown>>): void {
    this.seqs.push(seq);
    this.lines.push(line);
    this.text += copyFields(record, TARGETS[this.kind].columns, this.copy.carried) + this.copy.suffix;
  }

  /** Sends the gathered text, keeping it; a promise when the COPY asks to wait (or failed meanwhile). */
  private write(chunk: CopyChunk): Promise<void> | void {
    const buffer = Buffer.from(this.text);
    this.text = '';
    this.sent.push(buffer);
    // After a failure nothing more is sent: the rows are kept for the fallback all the same.
    if (chunk.failed || chunk.stream.write(buffer)) return;
    return drained(chunk.stream);
  }

  private async takeAfterEnd(
    seq: number,
    line: number,
    record: Readonly<Record<string, unknown>>,
    reported: readonly string[] | undefined,
  ): Promise<boolean> {
    await this.end();
    if (!this.active) return false;
    if (reported !== this.copy.reported) this.copy = await this.io.reopen(reported);
    this.chunk = await this.io.open(this.copy.statement);
    this.add(seq, line, record);
    return true;
  }

  /** Stages the rows of the failed COPY, read back from what was sent; the kind is staged from now on. */
  private async fallBack(): Promise<void> {
    this.active = false;
    const ending = this.copy.suffix.length - 1;
    const keyAt = TARGETS[this.kind].columns.indexOf(TARGETS[this.kind].key);
    const fields: string[] = [];
    const keys: string[] = [];
    for (const buffer of this.sent) {
      const rows = buffer.toString().split('\n');
      // Every buffer ends with a row's newline: the last piece is empty.
      for (let i = 0; i < rows.length - 1; i++) {
        const row = rows[i]!.slice(0, rows[i]!.length - ending);
        fields.push(row);
        // Read back, so that staging still knows whether the file's keys increase (no duplicates).
        keys.push(copyTextValue(row.split('\t', keyAt + 1)[keyAt]!));
      }
    }
    const { seqs, lines } = this;
    this.sent = [];
    this.seqs = [];
    this.lines = [];
    await this.io.stage({ kind: this.kind, reported: this.copy.reported, seqs, lines, keys, fields });
  }
}

/** Resolves when `stream` can take more, or has failed or closed (the failure is read at its end). */
function drained(stream: CopyStreamQuery): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('error', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('error', done);
    stream.on('close', done);
  });
}
