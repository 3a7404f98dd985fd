import { performance } from 'node:perf_hooks';
import { pipeline, type Readable } from 'node:stream';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../../db/connect.ts';
import type { Db } from '../../db/database.ts';
import type { Environment } from '../../config/config.ts';
import { TooManyRejected } from '../../domain/errors.ts';
import { redactPersonal } from '../../domain/privacy.ts';
import { PROFILE, writeProfileLine } from '../../observability/profile.ts';
import type { AnyRecord, LoadSource, ParsedRow } from '../../domain/records.ts';
import { claimEnvironment } from './claim-environment.ts';
import { type LoadOwner, markAbandonedLoads, openLoadOwner } from '../../db/load-owner.ts';
import { MeasureInput } from './measure-input.ts';
import { BatchMerger } from './merge-batches.ts';
import {
  mergeAdjustments,
  mergeLedger,
  mergeLegacyTransactions,
  mergeReturns,
  mergeTransactions,
} from './merge-staging.ts';
import { isNewRowsKind, newRowsCopy, type NewRowsKind, NewRowsWriter } from './new-rows.ts';
import { dropEndedStaging, StagingTables } from './staging.ts';
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
 * Kinds staged for the whole file and merged after the last batch: identical adjustments are told
 * apart by their occurrence number in the file, which a batch alone cannot count.
 */
const WHOLE_FILE_KINDS: ReadonlySet<RecordKind> = new Set(['adjustment']);
/**
 * Rows per COPY of new rows straight into their table. Each chunk is held as text until its COPY has
 * ended (in case it meets a stored key), and the parser fills the next one meanwhile: small enough to
 * keep memory flat, large enough that a statement and a savepoint per chunk cost nothing measurable.
 */
export const NEW_ROWS_CHUNK = 10_000;

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
  handle: DatabaseHandle,
  plan: LoadPlan,
  input: Readable,
  parse: ParseRows,
): Promise<LoadSummary> {
  const started = performance.now();
  plan.signal?.throwIfAborted();
  const meter = new MeasureInput();
  const measured = pipeline(input, meter, () => {});
  let rows: AsyncIterable<ParsedRow<AnyRecord>>;
  let loadId: number;
  let owner: LoadOwner | undefined;
  try {
    // A bad parse option throws here, before the load is recorded; so does another environment.
    rows = parse(measured);
    // The owner session exists before the row does, so a running row always has a live owner or none.
    const timeout = handle.pool.options.connectionTimeoutMillis;
    owner = await openLoadOwner(handle.connectionString, timeout ? { connectionTimeoutMillis: timeout } : {});
    loadId = await recordLoad(handle.db, plan, owner);
    await dropEndedStaging(handle.pool);
  } catch (error) {
    measured.destroy();
    input.destroy();
    await owner?.close();
    throw error;
  }
  const onAbort = () => meter.destroy(plan.signal?.reason as Error);
  plan.signal?.addEventListener('abort', onAbort, { once: true });
  const batchRows = plan.batchRows ?? BATCH_ROWS;
  const allStaging: StagingTables[] = [];
  const newStaging = (part: number | 'all') => {
    const s = new StagingTables(handle.pool, loadId, part);
    allStaging.push(s);
    return s;
  };
  const wholeFile = newStaging('all');
  let batch = newStaging(0);
  let inBatch = 0;
  const merger = new BatchMerger(handle.pool, {
    kinds: plan.kinds,
    mergeKind: (trx, kind, table, carried) => mergeKind(trx, kind, table, loadId, plan, carried),
    insertRejected: async (trx, table) => {
      await sql`insert into rejected_rows (load_id, line_number, raw, reason, account)
        select ${loadId}, line, raw, reason, ${plan.account}::text from ${sql.table(table)} order by seq`.execute(
        trx,
      );
    },
    // A failed merge stops the parser as an abort does; the loop then rethrows the merge's error.
    onFailure: (error) => meter.destroy(error as Error),
  });
  let rowsRead = 0;
  let rowsLoaded = 0;
  let rowsRejected = 0;
  const overLimit = () => plan.maxRejected !== undefined && rowsRejected > plan.maxRejected;
  const tooManyRejected = () =>
    new TooManyRejected(plan.fileName, rowsRejected, plan.maxRejected ?? 0, plan.maxRejectedSetting);
  const cutBatch = async () => {
    await merger.submit(batch);
    batch = newStaging(allStaging.length - 1);
    inBatch = 0;
  };
  /** The batch to stage a row of `kind` in: a new one when the parser's columns changed since. */
  const batchFor = async (kind: RecordKind, reported: readonly string[] | undefined) => {
    if (!batch.carriesAs(kind, reported)) {
      await cutBatch();
      batch.carriesAs(kind, reported);
    }
    return batch;
  };
  // Decided by the first record: its kind goes straight into its table while its keys are new.
  let newRows: NewRowsWriter | null | undefined;
  const openNewRows = async (kind: NewRowsKind, reported: readonly string[] | undefined) => {
    const copyFor = (columns: readonly string[] | undefined) =>
      merger.inTransaction((trx) =>
        newRowsCopy(trx, kind, loadId, plan.account, rowSource(kind, plan.legacy), columns),
      );
    return new NewRowsWriter(kind, await copyFor(reported), {
      chunkRows: plan.batchRows ?? NEW_ROWS_CHUNK,
      open: (statement) => merger.openCopy(statement),
      reopen: copyFor,
      stage: async (rows) => {
        const into = await batchFor(rows.kind, rows.reported);
        for (let i = 0; i < rows.seqs.length; i++) {
          const wait = into.addEncoded(
            rows.kind,
            rows.seqs[i]!,
            rows.lines[i]!,
            rows.keys[i]!,
            rows.fields[i]!,
          );
          if (wait) await wait;
          inBatch++;
        }
      },
    });
  };
  try {
    let lastProgress = performance.now();
    for await (const row of rows) {
      rowsRead++;
      let wait: Promise<void> | void = undefined;
      let staged = true;
      if (row.ok) {
        if (overLimit()) throw tooManyRejected();
        const kind = row.record.kind;
        if (!plan.kinds.has(kind)) {
          throw new Error(`a ${kind} record cannot be loaded as ${plan.source} (line ${row.line})`);
        }
        rowsLoaded++;
        const record = row.record as unknown as Record<string, unknown>;
        const reported = plan.carried?.get(kind);
        if (newRows === undefined) newRows = isNewRowsKind(kind) ? await openNewRows(kind, reported) : null;
        if (newRows?.active && newRows.kind === kind) {
          const taken = newRows.take(rowsRead, row.line, record, reported);
          staged = taken === false || (taken !== true && !(await taken));
        }
        if (staged) {
          const into = WHOLE_FILE_KINDS.has(kind)
            ? wholeFile
            : batch.carriesAs(kind, reported)
              ? batch
              : await batchFor(kind, reported);
          wait = into.add(kind, rowsRead, row.line, record);
        }
      } else {
        rowsRejected++;
        // Before the first record the input may be no report at all, which the parser says at its end
        // (NotAReport): the limit then waits for a record or the end, and stages no more rejections.
        if (!overLimit()) wait = batch.reject(rowsRead, row.line, row.raw, row.reason);
        else if (rowsLoaded > 0) throw tooManyRejected();
      }
      if (wait) await wait;
      if (plan.signal?.aborted) throw plan.signal.reason;
      // Waiting for the previous batch's merge costs no merge time (this batch merges right after it)
      // and tells whether to cut at all: a re-load learns it from its first batch.
      if (staged && ++inBatch >= batchRows && merger.batching) {
        // The merger's connection is the COPY's until it ends.
        await newRows?.end();
        if (await merger.idle()) await cutBatch();
      }
      if (
        (rowsRead & 1023) === 0 &&
        plan.onProgress &&
        performance.now() - lastProgress >= PROGRESS_INTERVAL_MS
      ) {
        lastProgress = performance.now();
        plan.onProgress({ rowsRead, bytes: meter.bytes });
      }
    }
    plan.signal?.throwIfAborted();
    if (overLimit()) throw tooManyRejected();
    plan.onProgress?.({ rowsRead, bytes: meter.bytes });
    await newRows?.end();
    if (inBatch > 0) await merger.submit(batch);
    if (PROFILE) writeProfileLine(started, `read, parsed and staged ${rowsRead} rows`);
    // The whole file's kinds merge last, after every batch, like one more batch.
    await merger.submit(wholeFile);

    const fileSha256 = meter.sha256();
    const format = typeof plan.format === 'function' ? plan.format(meter) : plan.format;
    const merged = await merger.commit(async (trx) => {
      const result = merger.result;
      await trx
        .updateTable('loads')
        .set({
          status: 'committed',
          format,
          rows_read: rowsRead,
          rows_loaded: rowsLoaded,
          rows_rejected: rowsRejected,
          rows_inserted: result.inserted,
          rows_updated: result.updated,
          rows_unchanged: rowsLoaded - result.inserted - result.updated,
          file_sha256: fileSha256,
          file_bytes: meter.bytes,
          zipped: meter.zipped,
          finished_at: sql<string>`now()`,
        })
        .where('load_id', '=', loadId)
        .execute();
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
  } catch (thrown) {
    measured.destroy();
    input.destroy();
    await newRows?.abandon();
    await merger.abort();
    // A failed merge stopped the parser: the parser's error is only the echo of the merge's.
    const error = merger.failure ?? thrown;
    await markFailed(handle.db, loadId, error, rowsRead, meter);
    throw error;
  } finally {
    plan.signal?.removeEventListener('abort', onAbort);
    for (const staging of allStaging) await staging.drop();
    await owner.close();
  }
}

async function recordLoad(db: DatabaseHandle['db'], plan: LoadPlan, owner: LoadOwner): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await claimEnvironment(trx, plan.environment, plan.fileName);
    // Loads left running by a process or a server that died: their owner session is gone.
    await markAbandonedLoads(trx);
    const row = await trx
      .insertInto('loads')
      .values({
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
      })
      .returning('load_id')
      .executeTakeFirstOrThrow();
    return row.load_id;
  });
}

function mergeKind(
  db: Db,
  kind: RecordKind,
  staging: string,
  loadId: number,
  plan: LoadPlan,
  carried: readonly string[] | undefined,
) {
  const { account, legacy } = plan;
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

async function markFailed(
  db: DatabaseHandle['db'],
  loadId: number,
  error: unknown,
  rowsRead: number,
  meter: MeasureInput,
): Promise<void> {
  // loads.error is read by analysts: a database error can quote a value of the failed row.
  const message = redactPersonal(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  try {
    await db
      .updateTable('loads')
      .set({
        status: 'failed',
        error: message,
        rows_read: rowsRead,
        file_bytes: meter.bytes,
        zipped: meter.zipped,
        finished_at: sql<string>`now()`,
      })
      .where('load_id', '=', loadId)
      .execute();
  } catch {
    // The database itself may be what failed; the original error is the one worth reporting.
  }
}
