import { performance } from 'node:perf_hooks';
import { pipeline, type Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { PoolHandle } from '../../db/pool.ts';
import type { Environment } from '../../config/config.ts';
import { TooManyRejected } from '../../domain/errors.ts';
import { redactPersonal } from '../../domain/privacy.ts';
import { PROFILE, writeProfileLine } from '../../observability/profile.ts';
import type { AnyRecord, LoadSource, ParsedRow } from '../../domain/records.ts';
import { type LoadOwner, markAbandonedLoads, openLoadOwner } from '../../db/load-owner.ts';
import { claimEnvironment, endLoadRow, inTransaction, insertLoadRow } from './load-statements.ts';
import { MeasureInput } from './measure-input.ts';
import { BatchMerger } from './merge-batches.ts';
import { isNewRowsKind, NewRowsWriter } from './new-rows.ts';
import { StagedBatches } from './batches.ts';
import { dropEndedStaging } from './staging.ts';
import { rowSource, type RecordKind } from '../../domain/sources.ts';
import type { LoadProgress } from './types.ts';
import type { LoadSummary } from '../../domain/load-summary.ts';

/** Everything recorded on the loads row, plus how to read the input. */
export interface LoadPlan {
  /** The load's account: its `loads` row, its rejected rows, and every row of a non-ledger target. */
  account: string;
  source: LoadSource;
  /** loads.format; a function decides it from the first bytes (the ledger's CSV or NDJSON). */
  format: string | ((input: MeasureInput) => string);
  queryType?: string;
  responseFields?: string;
  fileName: string;
  origin: 'file' | 'pull' | 'workflow' | 'direct';
  environment: Environment;
  window?: { start: string; end: string };
  workflowId?: string;
  /** Legacy CSV: rows get the legacy-* sources and never replace report API rows. */
  legacy: boolean;
  /** Record kinds this load accepts; any other kind is a programming error and fails the load. */
  kinds: ReadonlySet<RecordKind>;
  /** More rejected rows than this fails the load whole ({@link TooManyRejected}); unset: no limit. */
  maxRejected?: number;
  /** The option or variable that set maxRejected, named in the error (default `--max-rejected`). */
  maxRejectedSetting?: string | undefined;
  /**
   * The columns the input's format carries, per record kind, as the parser reports them while
   * reading (read at merge time). A column not carried is unknown: kept in existing rows, null in new
   * ones. A kind without an entry carries every column.
   */
  carried?: ReadonlyMap<RecordKind, readonly string[]>;
  onProgress?: (p: LoadProgress) => void;
  signal?: AbortSignal;
  /** Rows per staged batch ({@link BATCH_ROWS} unless set; tests set it small to cross batches). */
  batchRows?: number;
}

export type ParseRows = (input: Readable) => AsyncIterable<ParsedRow<AnyRecord>>;

const PROGRESS_INTERVAL_MS = 1000;
/**
 * Rows per batch: the merge of one batch runs while the next is parsed and staged. Larger batches
 * leave the first batch's staging alone on the clock for longer; smaller ones add a statement, an
 * ANALYZE and lock and plan overhead per batch.
 */
export const BATCH_ROWS = 200_000;
/**
 * Rows per COPY of new rows straight into their table. Each chunk is held as text until its COPY has
 * ended (in case it meets a stored key), and the parser fills the next one meanwhile: small enough to
 * keep memory flat, large enough that a statement and a savepoint per chunk cost nothing measurable.
 */
export const NEW_ROWS_CHUNK = 10_000;
/**
 * Rows read between two turns of the event loop. The parser hands rows over in microtasks, during
 * which Node polls no socket: without a turn, the COPY in flight got its next bytes, and its end or
 * the next statement got sent, only when a whole read of the input (about 2,000 legacy lines) had
 * been parsed, and the server waited for Node that long several times a chunk
 * (docs/benchmark-record.md §3, the overlap). A legacy chunk still waits for a turn three times:
 * each query's end before the next (a COPY's data goes with its query, copy-pipelined.ts). 32 rows
 * are about 0.4 ms of parsing; 256 were about 3 ms, half of it on average at each wait. A turn
 * costs about 1.6 µs of CPU.
 */
export const ROWS_PER_TURN = 32;

/**
 * The loading protocol shared by report and ledger loads:
 *
 * 1. Refuse another environment than the warehouse's, then record the load as `running` (one short
 *    transaction; a refused load writes nothing).
 * 2. Stream the input through a SHA-256/byte counter into the parser and the parsed rows (and rejected
 *    ones) into UNLOGGED staging tables by COPY, with backpressure: memory does not grow with the file.
 *    The file is staged in batches of {@link BATCH_ROWS} rows, each in tables of its own. Transactions,
 *    returns and legacy transactions (with their projection) whose keys are new skip staging: they are
 *    copied straight into their table, in the load's transaction, {@link NEW_ROWS_CHUNK} rows at a
 *    time, until a chunk meets a stored key; that chunk and the rest of the file are then staged and
 *    merged.
 * 3. In ONE transaction, on another connection, while the next batch is parsed and staged: merge each
 *    batch into the warehouse tables in file order (last duplicate wins, unchanged rows untouched,
 *    earlier versions to row_history), insert its rejected_rows; after the last, mark the load
 *    `committed` and commit. Only this transaction writes warehouse tables. Once a batch meets keys
 *    already stored (a re-load, a file out of key order), the rest of the file is one last batch.
 *
 * A load that rejects more than `plan.maxRejected` rows stops there and fails the same way.
 * On any failure (unreadable input, abort, database error, too many rejected rows) nothing of the load stays in the warehouse:
 * the transaction rolls back, the loads row becomes `failed` with the error, staging is dropped, and
 * the error is rethrown. rows_read = rows_loaded + rows_rejected for every committed load.
 */
export async function loadParsedRows(
  handle: PoolHandle,
  plan: LoadPlan,
  input: Readable,
  parse: ParseRows,
): Promise<LoadSummary> {
  const started = performance.now();
  plan.signal?.throwIfAborted();
  const meter = new MeasureInput();
  const measured = pipeline(input, meter, () => {});
  const { rows, loadId, owner } = await startLoad(handle, plan, input, measured, parse);
  const onAbort = () => meter.destroy(plan.signal?.reason as Error);
  plan.signal?.addEventListener('abort', onAbort, { once: true });
  const merger = new BatchMerger(handle.pool, {
    kinds: plan.kinds,
    loadId,
    account: plan.account,
    legacy: plan.legacy,
    input: meter,
  });
  const load: Load = {
    plan,
    loadId,
    meter,
    merger,
    batches: new StagedBatches(handle.pool, loadId, merger),
    counts: { read: 0, loaded: 0, rejected: 0 },
    newRows: undefined,
  };
  try {
    await stageRows(load, rows);
    if (PROFILE) writeProfileLine(started, `read, parsed and staged ${load.counts.read} rows`);
    return await commitLoad(load, started);
  } catch (thrown) {
    measured.destroy();
    input.destroy();
    await load.newRows?.abandon();
    await merger.abort();
    // A failed merge stopped the parser: the parser's error is only the echo of the merge's.
    const error = merger.failure ?? thrown;
    await markFailed(handle.pool, loadId, error, load.counts.read, meter);
    throw error;
  } finally {
    plan.signal?.removeEventListener('abort', onAbort);
    await load.batches.drop();
    await owner.close();
  }
}

/** One load under way: its plan and row, its input's meter, its transaction and its staging. */
interface Load {
  readonly plan: LoadPlan;
  readonly loadId: number;
  readonly meter: MeasureInput;
  readonly merger: BatchMerger;
  readonly batches: StagedBatches;
  readonly counts: { read: number; loaded: number; rejected: number };
  /** Decided by the first record: its kind goes straight into its table while its keys are new. */
  newRows: NewRowsWriter | null | undefined;
}

/**
 * Starts the parser and records the load as running, under a live owner session. A bad parse option
 * throws here, before the load is recorded; so does another environment. On failure nothing is left
 * open.
 */
async function startLoad(
  handle: PoolHandle,
  plan: LoadPlan,
  input: Readable,
  measured: Readable,
  parse: ParseRows,
): Promise<{ rows: AsyncIterable<ParsedRow<AnyRecord>>; loadId: number; owner: LoadOwner }> {
  let owner: LoadOwner | undefined;
  try {
    const rows = parse(measured);
    // The owner session exists before the row does, so a running row always has a live owner or none.
    const timeout = handle.pool.options.connectionTimeoutMillis;
    owner = await openLoadOwner(handle.connectionString, timeout ? { connectionTimeoutMillis: timeout } : {});
    const loadId = await recordLoad(handle.pool, plan, owner);
    await dropEndedStaging(handle.pool);
    return { rows, loadId, owner };
  } catch (error) {
    measured.destroy();
    input.destroy();
    await owner?.close();
    throw error;
  }
}

/**
 * Reads every row: a record goes straight into its table while its keys are new, else to staging; a
 * rejection to staging. Full batches are handed to the merger as they fill; the last after the end.
 */
async function stageRows(load: Load, rows: AsyncIterable<ParsedRow<AnyRecord>>): Promise<void> {
  const { plan, counts, batches, merger, meter } = load;
  const batchRows = plan.batchRows ?? BATCH_ROWS;
  let lastProgress = performance.now();
  for await (const row of rows) {
    counts.read++;
    let wait: Promise<void> | void = undefined;
    let staged = true;
    if (row.ok) {
      if (overLimit(load)) throw tooManyRejected(load);
      const kind = row.record.kind;
      if (!plan.kinds.has(kind)) {
        throw new Error(`a ${kind} record cannot be loaded as ${plan.source} (line ${row.line})`);
      }
      counts.loaded++;
      const record = row.record as unknown as Record<string, unknown>;
      const reported = plan.carried?.get(kind);
      if (load.newRows === undefined) load.newRows = await openNewRows(load, kind, reported);
      const newRows = load.newRows;
      if (newRows?.active && newRows.kind === kind) {
        const taken = newRows.take(counts.read, row.line, record, reported);
        staged = taken === false || (taken !== true && !(await taken));
      }
      if (staged) {
        const into = batches.into(kind, reported);
        wait = (into instanceof Promise ? await into : into).add(kind, counts.read, row.line, record);
      }
    } else {
      counts.rejected++;
      // Before the first record the input may be no report at all, which the parser says at its end
      // (NotAReport): the limit then waits for a record or the end, and stages no more rejections.
      if (!overLimit(load)) wait = batches.current.reject(counts.read, row.line, row.raw, row.reason);
      else if (counts.loaded > 0) throw tooManyRejected(load);
    }
    if (wait) await wait;
    if (counts.read % ROWS_PER_TURN === 0) await nextTurn();
    if (plan.signal?.aborted) throw plan.signal.reason;
    // Waiting for the previous batch's merge costs no merge time (this batch merges right after it)
    // and tells whether to cut at all: a re-load learns it from its first batch.
    if (staged && ++batches.inBatch >= batchRows && merger.batching) {
      // The merger's connection is the COPY's until it ends.
      await load.newRows?.end();
      if (await merger.idle()) await batches.cut();
    }
    if (
      (counts.read & 1023) === 0 &&
      plan.onProgress &&
      performance.now() - lastProgress >= PROGRESS_INTERVAL_MS
    ) {
      lastProgress = performance.now();
      plan.onProgress({ rowsRead: counts.read, bytes: meter.bytes });
    }
  }
  plan.signal?.throwIfAborted();
  if (overLimit(load)) throw tooManyRejected(load);
  plan.onProgress?.({ rowsRead: counts.read, bytes: meter.bytes });
  await load.newRows?.end();
  await batches.submitLast();
}

/** The writer of new rows when the first record's kind has one (null: every row is staged). */
function openNewRows(
  load: Load,
  kind: RecordKind,
  reported: readonly string[] | undefined,
): Promise<NewRowsWriter> | null {
  if (!isNewRowsKind(kind)) return null;
  const { plan, loadId, merger, batches } = load;
  return NewRowsWriter.open(kind, reported, {
    loadId,
    account: plan.account,
    source: rowSource(kind, plan.legacy),
    chunkRows: plan.batchRows ?? NEW_ROWS_CHUNK,
    merger,
    batches,
  });
}

function overLimit({ plan, counts }: Load): boolean {
  return plan.maxRejected !== undefined && counts.rejected > plan.maxRejected;
}

function tooManyRejected({ plan, counts }: Load): TooManyRejected {
  return new TooManyRejected(plan.fileName, counts.rejected, plan.maxRejected ?? 0, plan.maxRejectedSetting);
}

/** Waits for the last merge, marks the load committed with its counts, and commits. */
async function commitLoad(load: Load, started: number): Promise<LoadSummary> {
  const { plan, loadId, meter, merger } = load;
  const { read: rowsRead, loaded: rowsLoaded, rejected: rowsRejected } = load.counts;
  const fileSha256 = meter.sha256();
  const format = typeof plan.format === 'function' ? plan.format(meter) : plan.format;
  const merged = await merger.commit(async (trx) => {
    const result = merger.result;
    await endLoadRow(trx, loadId, meter, {
      status: 'committed',
      format,
      rows_read: rowsRead,
      rows_loaded: rowsLoaded,
      rows_rejected: rowsRejected,
      rows_inserted: result.inserted,
      rows_updated: result.updated,
      rows_unchanged: rowsLoaded - result.inserted - result.updated,
      file_sha256: fileSha256,
    });
    return result;
  });
  return {
    loadId,
    source: plan.source,
    status: 'committed',
    rowsRead,
    rowsLoaded,
    rowsRejected,
    rowsInserted: merged.inserted,
    rowsUpdated: merged.updated,
    rowsUnchanged: rowsLoaded - merged.inserted - merged.updated,
    fileSha256,
    bytes: meter.bytes,
    zipped: meter.zipped,
    durationMs: Math.round(performance.now() - started),
  };
}

/** Records the load as running, in a transaction of its own (load-statements.ts). */
function recordLoad(pool: PoolHandle['pool'], plan: LoadPlan, owner: LoadOwner): Promise<number> {
  return inTransaction(pool, async (trx) => {
    await claimEnvironment(trx, plan.environment, plan.fileName);
    // Loads left running by a process or a server that died: their owner session is gone.
    await markAbandonedLoads(trx);
    return insertLoadRow(trx, {
      account: plan.account,
      source: plan.source,
      environment: plan.environment,
      origin: plan.origin,
      format: typeof plan.format === 'string' ? plan.format : plan.format(new MeasureInput()),
      query_type: plan.queryType ?? null,
      response_fields: plan.responseFields ?? null,
      file_name: plan.fileName,
      window_start: plan.window?.start ?? null,
      window_end: plan.window?.end ?? null,
      workflow_id: plan.workflowId ?? null,
      owner_pid: owner.pid,
      owner_backend_start: owner.backendStart,
    });
  });
}

async function markFailed(
  pool: PoolHandle['pool'],
  loadId: number,
  error: unknown,
  rowsRead: number,
  meter: MeasureInput,
): Promise<void> {
  // loads.error is read by analysts: a database error can quote a value of the failed row.
  const message = redactPersonal(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  try {
    await endLoadRow(pool, loadId, meter, { status: 'failed', error: message, rows_read: rowsRead });
  } catch {
    // The database itself may be what failed; the original error is the one worth reporting.
  }
}
