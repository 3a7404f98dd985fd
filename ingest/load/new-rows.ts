import type { Queryable } from '../../db/queryable.ts';
import { CopyBuffers, copyTextValue, copyValue, copyValues } from './copy-text.ts';
import type { StagedBatches } from './batches.ts';
import type { BatchMerger } from './merge-batches.ts';
import { attnumsOf } from './load-statements.ts';
import { LEGACY_AS_PROVIDER, LEGACY_PROJECTION_REQUIRES } from './legacy-projection.ts';
import { ChunkKeys, type NotedField, notedFields } from './noted-keys.ts';
import { carriedColumns, maskBits, type Target, TARGETS } from './targets.ts';

/**
 * The kinds whose new rows may be copied straight into their table: transactions and returns, and
 * legacy transactions with their projection into provider_transactions.
 */
export type NewRowsKind = 'transaction' | 'return' | 'legacy-transaction';

export const isNewRowsKind = (kind: string): kind is NewRowsKind =>
  kind === 'transaction' || kind === 'return' || kind === 'legacy-transaction';

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
  /** The fields of a record written into key columns, which the loader notes itself (noted-keys.ts). */
  readonly noted: readonly NotedField[];
  /** The load's account: the days it notes are this account's. */
  readonly account: string;
  /** Legacy transactions: the provider_transactions row each new one projects to, as the merge's. */
  readonly projection?: Projection;
}

/** The COPY of legacy rows' projection into provider_transactions (`mergeLegacyTransactions`). */
interface Projection {
  readonly statement: string;
  readonly suffix: string;
  /** For each provider column, the legacy field it is read from; null where the load carries none. */
  readonly from: readonly (string | null)[];
  /** For each provider column, the position of its legacy field among the legacy COPY's columns (-1: none). */
  readonly at: readonly number[];
  /** Legacy fields a row needs (non-null) to be projected; null when the load cannot project any. */
  readonly required: readonly string[] | null;
  /** The projected row's keys that the legacy row's own do not note already. */
  readonly noted: readonly NotedField[];
}

/**
 * The projection's COPY line of a legacy record (with the newline), or null when it has none. `values`
 * are the record's legacy COPY fields ({@link copyValues}), which the projection reuses instead of
 * encoding the same fields again.
 */
export function projectionLine(
  p: Projection,
  record: Readonly<Record<string, unknown>>,
  values: readonly string[],
): string | null {
  if (p.required === null) return null;
  for (const field of p.required) if (record[field] === null || record[field] === undefined) return null;
  let out = '';
  for (let i = 0; i < p.at.length; i++) {
    const at = p.at[i]!;
    if (i > 0) out += '\t';
    out += at < 0 ? '\\N' : values[at]!;
  }
  return out + p.suffix;
}

/**
 * The COPY that writes new rows of `kind` as the merge's insert of a new key would: the same columns,
 * `source` (legacy_transactions has none), the load as `load_id` (and `first_load_id`), and
 * `unknown_mask` for what the load's format does not carry. A column the format does not carry is
 * written as null, which is what the insert leaves in it: no record column of these tables has a
 * default (`load-new-rows.test.ts` checks). A legacy transaction also gets its projection.
 */
export async function newRowsCopy(
  db: Queryable,
  kind: NewRowsKind,
  loadId: number,
  account: string,
  source: string,
  carriedByFormat?: readonly string[],
): Promise<NewRowsCopy> {
  const t = TARGETS[kind];
  const carried = new Set(carriedColumns(t, carriedByFormat));
  const legacy = kind === 'legacy-transaction';
  const own = await lineage(
    db,
    t,
    t.columns.filter((c) => !carried.has(c)),
    account,
    legacy ? null : source,
    loadId,
  );
  const noted = notedFields(t.table, (c) => (carried.has(c) ? c : null));
  let projection: Projection | undefined;
  if (legacy) {
    const p = TARGETS.transaction;
    const from = p.columns.map((c) => {
      const field = LEGACY_AS_PROVIDER[c];
      return field !== undefined && carried.has(field) ? field : null;
    });
    const unknown = p.columns.filter((_, i) => from[i] === null);
    const rest = await lineage(db, p, unknown, account, source, loadId);
    // As mergeLegacyTransactions: without all of amount, currency and status no new row is projected.
    const required = LEGACY_PROJECTION_REQUIRES.every((c) => carried.has(c))
      ? LEGACY_PROJECTION_REQUIRES
      : null;
    const projected = notedFields(p.table, (c) => from[p.columns.indexOf(c)] ?? null);
    projection = {
      statement: `copy ${p.table} (${[...p.columns, ...rest.columns].join(', ')}) from stdin`,
      suffix: rest.suffix,
      from,
      at: from.map((field) => (field === null ? -1 : fieldAt(t.columns, field))),
      required,
      noted: projected.filter((k) => !noted.some((o) => o.array === k.array && o.field === k.field)),
    };
  }
  return {
    statement: `copy ${t.table} (${[...t.columns, ...own.columns].join(', ')}) from stdin`,
    carried,
    reported: carriedByFormat,
    suffix: own.suffix,
    noted,
    account,
    ...(projection ? { projection } : {}),
  };
}

/** The position of a legacy field among the legacy COPY's columns (every projected field is one). */
function fieldAt(columns: readonly string[], field: string): number {
  const at = columns.indexOf(field);
  if (at < 0)
    throw new Error(`the legacy projection reads ${field}, which legacy_transactions does not hold`);
  return at;
}

/** The columns after a row's record columns, and their COPY text (with the newline): the same for every row. */
async function lineage(
  db: Queryable,
  t: Target,
  unknown: readonly string[],
  account: string,
  source: string | null,
  loadId: number,
): Promise<{ columns: string[]; suffix: string }> {
  const loads = t.hasFirstLoad ? ['load_id', 'first_load_id'] : ['load_id'];
  const mask =
    t.tracksUnknown && unknown.length > 0 ? maskBits(t, await attnumsOf(db, t.table), unknown) : null;
  const values: Record<string, unknown> = {
    account,
    ...(source === null ? {} : { source }),
    ...Object.fromEntries(loads.map((c) => [c, loadId])),
    ...(t.tracksUnknown ? { unknown_mask: mask === null ? null : String(mask) } : {}),
  };
  const columns = Object.keys(values);
  return { columns, suffix: `${columns.map((c) => `\t${copyValue(values[c])}`).join('')}\n` };
}

/**
 * Rows of a load's first chunk. The server has nothing to do until the first chunk is shipped, so a
 * small one starts it early (a full chunk is about 0.15 s of parsing on a quiet machine); each chunk
 * after doubles, so that Node gathers the next one while the server writes the one before.
 */
export const FIRST_CHUNK_ROWS = 1_000;
/**
 * How far Node gathers ahead of the COPY in flight, in chunks: a full chunk whose turn has not come
 * keeps growing instead of stopping the parser, up to this many chunks' rows. On a shared machine
 * either side is taken off its CPU for a while; with one chunk ahead, Node then waited for the server
 * or the server for Node, where rows gathered ahead keep both at work (docs/benchmark-record.md
 * §3). Each chunk's COPY text is held until its COPY ends: with four chunks ahead the peak RSS of a
 * 1,000,000-record JSON import was 291 MB, near the 300 MB that a load is kept under.
 */
export const CHUNKS_AHEAD = 2;

/** The load a {@link NewRowsWriter} writes for. */
export interface NewRowsLoad {
  readonly loadId: number;
  readonly account: string;
  /** The rows' source (domain/sources.ts rowSource). */
  readonly source: string;
  /** Rows per COPY statement (each in a savepoint of its own). */
  readonly chunkRows: number;
  /** The load's transaction: the COPYs run in it, queued with the merges. */
  readonly merger: BatchMerger;
  /** Where the rows of a COPY that met a stored key are staged, after everything staged before. */
  readonly batches: StagedBatches;
}

/** One chunk's rows as COPY text, with what the COPY needs and what staging them would. */
interface Chunk {
  readonly copy: NewRowsCopy;
  readonly sent: Buffer[];
  readonly projected: Buffer[];
  readonly seqs: number[];
  readonly lines: number[];
  readonly keys: ChunkKeys;
}

/** A chunk being written, and whether all of it was (false: a key of it was stored already). */
interface InFlight {
  readonly chunk: Chunk;
  readonly written: Promise<boolean>;
  /** Whether `written` has settled: the next chunk may then be shipped at once. */
  ended: boolean;
}

/**
 * Writes the rows of one kind straight into their table while their keys are new, a chunk of
 * {@link NewRowsLoad.chunkRows} rows per COPY (and, for legacy rows, a second COPY of their projection),
 * each in its own savepoint. Node gathers the next chunk while PostgreSQL writes the one before (and
 * goes on gathering, up to {@link CHUNKS_AHEAD} chunks' rows, while that one is not done): the load's
 * one connection does one COPY at a time, and a chunk whose COPYs ran while Node waited left Node
 * idle for the projection's COPY of every chunk (docs/architecture.md). A chunk is kept as COPY
 * text in buffers (off the V8 heap: keeping a string per row cost more in garbage collection than the
 * COPY saved) until its COPYs end. When one meets a stored key (a re-load, a restatement, a key twice
 * in the file), it fails on the primary key and is rolled back to its savepoint; its rows are then
 * staged and merged like any other, then the chunk gathered meanwhile, then the rest of the file
 * ({@link active} false), in file order, so that the last occurrence of a key still wins and nothing
 * is lost.
 */
export class NewRowsWriter {
  readonly kind: NewRowsKind;
  /** False once a COPY met a stored key: the caller stages this kind from then on. */
  active = true;
  private copy: NewRowsCopy;
  private readonly load: NewRowsLoad;
  /** The chunk being gathered; its rows' COPY text in the buffers below until it is shipped. */
  private next: Chunk;
  private readonly rows = new CopyBuffers();
  private readonly projectedRows = new CopyBuffers();
  /** The chunk whose COPYs run, if any: at most one, while the next is gathered. */
  private inFlight: InFlight | null = null;
  /** Rows of the chunk being gathered: {@link FIRST_CHUNK_ROWS}, doubled at each chunk up to chunkRows. */
  private chunkRows: number;

  private constructor(kind: NewRowsKind, copy: NewRowsCopy, load: NewRowsLoad) {
    this.kind = kind;
    this.copy = copy;
    this.load = load;
    this.next = emptyChunk(copy);
    this.chunkRows = Math.min(FIRST_CHUNK_ROWS, load.chunkRows);
  }

  /** A writer of `kind`'s new rows, with the columns the parser reports now. */
  static async open(
    kind: NewRowsKind,
    reported: readonly string[] | undefined,
    load: NewRowsLoad,
  ): Promise<NewRowsWriter> {
    return new NewRowsWriter(kind, await copyFor(kind, reported, load), load);
  }

  /**
   * Takes a row of {@link kind} while {@link active}; `reported` is the columns the parser reports
   * now. False (at once or after a wait) when the caller is to stage the row itself, after the rows
   * this writer staged: a COPY met a stored key. A promise only when the row ended a chunk, or the
   * columns changed.
   */
  take(
    seq: number,
    line: number,
    record: Readonly<Record<string, unknown>>,
    reported: readonly string[] | undefined,
  ): boolean | Promise<boolean> {
    if (!this.active) return false;
    if (reported !== this.copy.reported) return this.takeWithColumns(seq, line, record, reported);
    this.add(seq, line, record);
    if (this.shipNow()) return this.ship().then(() => true);
    return true;
  }

  /**
   * Whether the chunk gathered is shipped now: it holds its rows and may be shipped, or, while the
   * chunks still double, the chunk in flight has ended (the server waits for Node) and it holds a
   * first chunk's rows. The server wrote each of the first chunks sooner than Node gathered twice its
   * rows: it waited, asleep, for the second to fourth, 43 ms of a 100,000-line load at load 2
   * (docs/benchmark-record.md §3). Full chunks go as before: a load whose parse is slower than
   * the server's writes (a JSON report) keeps its full chunks ({@link NewRowsLoad.chunkRows}).
   */
  private shipNow(): boolean {
    const rows = this.next.seqs.length;
    if (this.inFlight?.ended && this.chunkRows < this.load.chunkRows) {
      return rows >= Math.min(FIRST_CHUNK_ROWS, this.load.chunkRows);
    }
    return rows >= this.chunkRows && this.mayShip();
  }

  /** Whether the chunk gathered may be shipped now: none in flight, or gathered as far ahead as it may. */
  private mayShip(): boolean {
    const inFlight = this.inFlight;
    return inFlight === null || inFlight.ended || this.next.seqs.length >= CHUNKS_AHEAD * this.load.chunkRows;
  }

  /**
   * Writes every row taken, and waits for it: before the caller waits for the load's connection
   * (a COPY holds it until it ends), and after the last row. A chunk that met a stored key is staged.
   */
  async end(): Promise<void> {
    await this.settle();
    if (this.next.seqs.length === 0) return;
    // Staged instead when the chunk before met a stored key.
    await this.ship();
    await this.settle();
  }

  /** Ends the COPY in progress keeping nothing: the load failed, and its transaction rolls back. */
  async abandon(): Promise<void> {
    this.active = false;
    const inFlight = this.inFlight;
    this.inFlight = null;
    this.next = emptyChunk(this.copy);
    this.rows.take();
    this.projectedRows.take();
    if (inFlight) await inFlight.written.catch(() => {});
  }

  private add(seq: number, line: number, record: Readonly<Record<string, unknown>>): void {
    const next = this.next;
    next.seqs.push(seq);
    next.lines.push(line);
    const values = copyValues(record, TARGETS[this.kind].columns, this.copy.carried);
    this.rows.write(values.join('\t') + this.copy.suffix);
    next.keys.add(record, this.copy.noted);
    if (this.copy.projection) {
      const line = projectionLine(this.copy.projection, record, values);
      if (line !== null) {
        this.projectedRows.write(line);
        next.keys.add(record, this.copy.projection.noted);
      }
    }
  }

  /**
   * Starts the COPYs of the chunk gathered, once the one before has ended (staged instead, with this
   * one, when it met a stored key). Returns without waiting for them.
   */
  private async ship(): Promise<void> {
    await this.settle();
    const chunk = this.next;
    this.chunkRows = Math.min(this.chunkRows * 2, this.load.chunkRows);
    chunk.sent.push(...this.rows.take());
    chunk.projected.push(...this.projectedRows.take());
    this.next = emptyChunk(this.copy);
    if (!this.active) return this.fallBack(chunk);
    const written = writeChunk(this.load.merger, chunk);
    const inFlight: InFlight = { chunk, written, ended: false };
    // Awaited by settle; until then, a rejection here is not an unhandled one.
    written.then(
      () => (inFlight.ended = true),
      () => (inFlight.ended = true),
    );
    this.inFlight = inFlight;
  }

  /** Waits for the chunk in flight; one that met a stored key is staged, and the kind from then on. */
  private async settle(): Promise<void> {
    const inFlight = this.inFlight;
    if (inFlight === null) return;
    const written = await inFlight.written;
    this.inFlight = null;
    if (!written) await this.fallBack(inFlight.chunk);
  }

  /** The parser's columns changed mid-file: what was taken is written first, then the COPY for the new ones. */
  private async takeWithColumns(
    seq: number,
    line: number,
    record: Readonly<Record<string, unknown>>,
    reported: readonly string[] | undefined,
  ): Promise<boolean> {
    await this.end();
    if (!this.active) return false;
    this.copy = await copyFor(this.kind, reported, this.load);
    this.next = emptyChunk(this.copy);
    this.add(seq, line, record);
    return true;
  }

  /** Stages the rows of a chunk, read back from its COPY text; the kind is staged from now on. */
  private async fallBack(chunk: Chunk): Promise<void> {
    this.active = false;
    const ending = chunk.copy.suffix.length - 1;
    const keyAt = TARGETS[this.kind].columns.indexOf(TARGETS[this.kind].key);
    const fields: string[] = [];
    const keys: string[] = [];
    for (const buffer of chunk.sent) {
      const rows = buffer.toString().split('\n');
      // Every buffer ends with a row's newline: the last piece is empty.
      for (let i = 0; i < rows.length - 1; i++) {
        const row = rows[i]!.slice(0, rows[i]!.length - ending);
        fields.push(row);
        // Read back, so that staging still knows whether the file's keys increase (no duplicates).
        keys.push(copyTextValue(row.split('\t', keyAt + 1)[keyAt]!));
      }
    }
    await this.load.batches.stageEncoded({
      kind: this.kind,
      reported: chunk.copy.reported,
      seqs: chunk.seqs,
      lines: chunk.lines,
      keys,
      fields,
    });
  }
}

function emptyChunk(copy: NewRowsCopy): Chunk {
  return { copy, sent: [], projected: [], seqs: [], lines: [], keys: new ChunkKeys(copy.account) };
}

/**
 * The COPYs of one chunk in the load's transaction, after everything queued before: true when all
 * its rows are written, false when one met a stored key (nothing of it stays).
 */
function writeChunk(merger: BatchMerger, chunk: Chunk): Promise<boolean> {
  const projection = chunk.copy.projection;
  const copies = [{ statement: chunk.copy.statement, data: chunk.sent }];
  if (projection && chunk.projected.length > 0) {
    copies.push({ statement: projection.statement, data: chunk.projected });
  }
  return merger.copyChunk(copies, chunk.seqs.length, chunk.keys);
}

/** The COPY of `kind`'s new rows for the columns `reported`, prepared in the load's transaction. */
function copyFor(kind: NewRowsKind, reported: readonly string[] | undefined, load: NewRowsLoad) {
  return load.merger.inTransaction((trx) =>
    newRowsCopy(trx, kind, load.loadId, load.account, load.source, reported),
  );
}
