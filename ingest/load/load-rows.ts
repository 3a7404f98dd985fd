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
import {
  mergeAdjustments,
  mergeLedger,
  mergeLegacyTransactions,
  mergeReturns,
  mergeTransactions,
  type MergeResult,
} from './merge-staging.ts';
import { StagingTables } from './staging.ts';
import { rowSource, type RecordKind } from './targets.ts';
import type { LoadProgress, LoadSummary } from './types.ts';

/** Everything recorded on the loads row, plus how to read the input. */
export interface LoadPlan {
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
  /**
   * The columns the input's format carries, per record kind, as the parser reports them while
   * reading (read at merge time). A column not carried is unknown: kept in existing rows, null in new
   * ones. A kind without an entry carries every column.
   */
  carried?: ReadonlyMap<RecordKind, readonly string[]>;
  onProgress?: (p: LoadProgress) => void;
  signal?: AbortSignal;
}

export type ParseRows = (input: Readable) => AsyncIterable<ParsedRow<AnyRecord>>;

const PROGRESS_INTERVAL_MS = 1000;
/** Merge order: fixed, so that two loads touching the same tables take their locks in the same order. */
const KIND_ORDER: readonly RecordKind[] = [
  'legacy-transaction',
  'transaction',
  'return',
  'adjustment',
  'ledger',
];

/**
 * The loading protocol shared by report and ledger loads:
 *
 * 1. Refuse another environment than the warehouse's, then record the load as `running` (one short
 *    transaction; a refused load writes nothing).
 * 2. Stream the input through a SHA-256/byte counter into the parser and the parsed rows (and rejected
 *    ones) into UNLOGGED staging tables by COPY, with backpressure: memory does not grow with the file.
 * 3. In ONE transaction: merge staging into the warehouse tables (last duplicate wins, unchanged rows
 *    untouched, earlier versions to row_history), insert rejected_rows, mark the load `committed`.
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
  } catch (error) {
    measured.destroy();
    input.destroy();
    await owner?.close();
    throw error;
  }
  const onAbort = () => meter.destroy(plan.signal?.reason as Error);
  plan.signal?.addEventListener('abort', onAbort, { once: true });
  const staging = new StagingTables(handle.pool, loadId);
  let rowsRead = 0;
  let rowsLoaded = 0;
  let rowsRejected = 0;
  try {
    let lastProgress = performance.now();
    for await (const row of rows) {
      rowsRead++;
      let wait: Promise<void> | void;
      if (row.ok) {
        const kind = row.record.kind;
        if (!plan.kinds.has(kind)) {
          throw new Error(`a ${kind} record cannot be loaded as ${plan.source} (line ${row.line})`);
        }
        rowsLoaded++;
        wait = staging.add(kind, rowsRead, row.line, row.record as unknown as Record<string, unknown>);
      } else {
        rowsRejected++;
        if (plan.maxRejected !== undefined && rowsRejected > plan.maxRejected) {
          throw new TooManyRejected(plan.fileName, rowsRejected, plan.maxRejected);
        }
        wait = staging.reject(rowsRead, row.line, row.raw, row.reason);
      }
      if (wait) await wait;
      if (plan.signal?.aborted) throw plan.signal.reason;
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
    plan.onProgress?.({ rowsRead, bytes: meter.bytes });
    await staging.finish();
    if (PROFILE) writeProfileLine(started, `read, parsed and staged ${rowsRead} rows`);

    const fileSha256 = meter.sha256();
    const format = typeof plan.format === 'function' ? plan.format(meter) : plan.format;
    const merged = await handle.db.transaction().execute(async (trx) => {
      // The merge's hash joins (the seq of every new row of a first load) and the adjustments' window
      // sort: in memory rather than spilled to disk.
      await sql`set local work_mem = '256MB'`.execute(trx);
      const result: MergeResult = { inserted: 0, updated: 0 };
      const present = new Set(staging.kinds());
      for (const kind of KIND_ORDER) {
        if (!present.has(kind)) continue;
        const carried = plan.carried?.get(kind);
        const r = await mergeKind(trx, kind, staging.tableOf(kind), loadId, plan.legacy, carried);
        result.inserted += r.inserted;
        result.updated += r.updated;
      }
      if (rowsRejected > 0) {
        await sql`insert into rejected_rows (load_id, line_number, raw, reason)
          select ${loadId}, line, raw, reason from ${sql.table(staging.tableOf('rejected'))} order by seq`.execute(
          trx,
        );
      }
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
  } catch (error) {
    measured.destroy();
    input.destroy();
    await markFailed(handle.db, loadId, error, rowsRead, meter);
    throw error;
  } finally {
    plan.signal?.removeEventListener('abort', onAbort);
    await staging.drop();
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
  legacy: boolean,
  carried: readonly string[] | undefined,
) {
  switch (kind) {
    case 'transaction':
      return mergeTransactions(db, staging, loadId, rowSource(kind, legacy), carried);
    case 'return':
      return mergeReturns(db, staging, loadId, rowSource(kind, legacy), carried);
    case 'legacy-transaction':
      return mergeLegacyTransactions(db, staging, loadId, carried);
    case 'adjustment':
      return mergeAdjustments(db, staging, loadId);
    case 'ledger':
      return mergeLedger(db, staging, loadId, carried);
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
