import { sql } from 'kysely';
import type pg from 'pg';
import { databaseOnClient } from '../../db/database-on-client.ts';
import { type RecordKind, rowSource } from '../../domain/sources.ts';
import { KIND_ORDER } from './load-statements.ts';
import {
  mergeAdjustments,
  mergeLedger,
  mergeLegacyTransactions,
  type MergeResult,
  mergeReturns,
  mergeTransactions,
} from './merge-staging.ts';
import type { StagingTables } from './staging.ts';

// The merge of a staged batch, through Kysely: imported by merge-batches.ts when a batch holds rows,
// so that a load of new rows alone never loads Kysely (docs/benchmark-record.md §3).

/** The load the merger writes for: what it may write, and under which load and account. */
export interface MergeTarget {
  /** The kinds this load may write: their tables are locked all at once, in KIND_ORDER (load-statements.ts), by the first merge. */
  readonly kinds: ReadonlySet<RecordKind>;
  readonly loadId: number;
  readonly account: string;
  /** Legacy CSV: rows get the legacy-* sources and never replace report API rows. */
  readonly legacy: boolean;
  /** The input being parsed: a failed merge destroys it, so that the parser stops reading. */
  readonly input: { destroy(error?: Error): unknown };
}

/**
 * Merges every kind of a staged batch into the warehouse, in {@link KIND_ORDER}, then inserts its
 * rejected rows, in the load's transaction on `client`. `allNew`: every kind's keys were past the
 * stored ones.
 */
export async function mergeBatch(
  client: pg.PoolClient,
  batch: StagingTables,
  target: MergeTarget,
): Promise<MergeResult & { allNew: boolean }> {
  const db = databaseOnClient(client);
  const result = { inserted: 0, updated: 0, allNew: true };
  await batch.prepare((text) => client.query(text));
  for (const kind of KIND_ORDER) {
    if (!batch.has(kind)) continue;
    const r = await mergeKind(db, kind, batch.tableOf(kind), target, batch.carriedOf(kind));
    result.inserted += r.inserted;
    result.updated += r.updated;
    if (!r.allNew) result.allNew = false;
  }
  if (batch.has('rejected')) {
    const { loadId, account } = target;
    await sql`insert into rejected_rows (load_id, line_number, raw, reason, account)
      select ${loadId}, line, raw, reason, ${account}::text from ${sql.table(batch.tableOf('rejected'))} order by seq`.execute(
      db,
    );
  }
  return result;
}

/** Merges the staged rows of one kind of one batch into the warehouse (in the load's transaction). */
function mergeKind(
  db: ReturnType<typeof databaseOnClient>,
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
