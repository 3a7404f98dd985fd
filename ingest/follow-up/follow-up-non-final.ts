import { type Insertable, type Kysely, sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { Environment } from '../../config/config.ts';
import type { FollowUpResult } from '../../domain/run-summary.ts';
import { addDays } from '../../domain/time/calendar.ts';
import { type LookupStatus, lookupError, readStatusAnswer, type StatusAnswer } from './status-answer.ts';

/**
 * The nightly follow-up (docs/operations.md "What the nightly run does"): every provider transaction
 * of one account still PENDING, up to `horizonDays` before the night's day, is followed until the
 * provider reports it final. The nightly windows re-pull the last days; this asks the status endpoint,
 * with the account's own credentials, about the older ones: oldest first, at most `limit` a night, one
 * at a time (the client honours 429 and Retry-After; the activity runs on the account's provider
 * queue, whose rate limit is the account's quota), and not again within `askAgainAfterHours`.
 *
 * Every answer is kept in status_lookups (a failed lookup with its error, asked again next night).
 * A final answer updates the provider row the way a report would: in one load of source
 * `status-lookup`, with the earlier version in row_history. A final row is never touched (the
 * update requires PENDING), so the follow-up cannot undo a report. Never throws for a lookup; database
 * errors propagate (the activity is retried; what committed is not asked again).
 */

export interface FollowUpRequest {
  readonly account: string;
  readonly environment: Environment;
  readonly origin: 'workflow' | 'pull';
  readonly lookupStatus: LookupStatus;
  /** The night's Eastern day: the horizon counts back from it. */
  readonly day: string;
  /** Only transactions dated before this Eastern day (the nightly windows re-pull the rest). */
  readonly before: string;
  /** RECON_FOLLOW_UP_DAYS. */
  readonly horizonDays: number;
  /** RECON_FOLLOW_UP_PER_NIGHT. */
  readonly limit: number;
  /** Only transactions PENDING for longer than this (`recon reconcile --follow-up-pending`). */
  readonly pendingForHours?: number;
  /** Not asked again within this many hours (default 20: once a night). */
  readonly askAgainAfterHours?: number;
  /**
   * The last Eastern date whose PENDING transactions are stuck (reconcile's stuckThrough): a
   * transaction found still PENDING on or before it, or whose lookup failed, has its date reconciled,
   * so that stuck_pending opens or shows the night's check.
   */
  readonly stuckThrough?: string;
  /** The instant of the run (ISO); default now. */
  readonly now?: string;
  readonly workflowId?: string;
  readonly signal?: AbortSignal;
  readonly onProgress?: (done: number) => void;
}

interface Due {
  readonly transaction_id: string;
  readonly transaction_on: string;
}

/** The transactions to ask about tonight, oldest first, and how many are non-final in all. */
async function dueTransactions(db: Kysely<Database>, req: FollowUpRequest, now: string) {
  const horizon = addDays(req.day, -req.horizonDays);
  const again = req.askAgainAfterHours ?? 20;
  const base = db
    .selectFrom('provider_transactions as p')
    .where('p.account', '=', req.account)
    .where('p.status', '=', 'PENDING')
    .where('p.transaction_on', '>=', horizon)
    .where('p.transaction_on', '<', req.before);
  const counted = await base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  let due = base
    .select(['p.transaction_id', sql<string>`p.transaction_on::text`.as('transaction_on')])
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('status_lookups as s')
            .select('s.lookup_id')
            .whereRef('s.transaction_id', '=', 'p.transaction_id')
            .where('s.account', '=', req.account)
            .where(
              's.looked_up_at',
              '>',
              sql<string>`${now}::timestamptz - make_interval(hours => ${again}::int)`,
            ),
        ),
      ),
    );
  if (req.pendingForHours !== undefined) {
    due = due.where(
      'p.transaction_at',
      '<',
      sql<string>`${now}::timestamptz - make_interval(hours => ${req.pendingForHours}::int)`,
    );
  }
  const rows: Due[] = await due
    .orderBy('p.transaction_on')
    .orderBy('p.transaction_at')
    .orderBy('p.transaction_id')
    .limit(req.limit)
    .execute();
  return { rows, nonFinal: Number(counted.n) };
}

/**
 * Still non-final past the stuck limit: its date is reconciled again after the night, so that its
 * stuck_pending opens or, open already, shows this night's check (reconcile/rules/pending.ts).
 */
function isStuck(req: FollowUpRequest, due: Due): boolean {
  return req.stuckThrough !== undefined && due.transaction_on <= req.stuckThrough;
}

/** Answers recorded in status_lookups together, one statement and one commit per this many. */
const RECORD_EVERY = 50;

type LookupRow = Insertable<Database['status_lookups']>;

/** Follows up one account's non-final transactions (see the module comment). */
export async function followUpNonFinal(db: Kysely<Database>, req: FollowUpRequest): Promise<FollowUpResult> {
  const now = req.now ?? new Date().toISOString();
  const { rows, nonFinal } = await dueTransactions(db, req, now);
  const settled: { due: Due; answer: StatusAnswer }[] = [];
  const stuck = new Set<string>();
  let failed = 0;
  // Answers are kept in batches: a commit per answer cost more than the answers' whole write (500 a
  // night: 11.6 s against 0.3 s, commit eb62648; docs/benchmark-record.md, "The nightly run with
  // its follow-up"). A process that dies mid-batch loses at most RECORD_EVERY answers, which the
  // retry asks again.
  let batch: LookupRow[] = [];
  const record = async () => {
    if (batch.length > 0) await db.insertInto('status_lookups').values(batch).execute();
    batch = [];
  };
  try {
    for (const [i, due] of rows.entries()) {
      if (req.signal?.aborted) break;
      const row = { transaction_id: due.transaction_id, account: req.account, looked_up_at: now };
      try {
        const answer = readStatusAnswer(await req.lookupStatus(due.transaction_id));
        batch.push({ ...row, ...answer });
        if (answer.status && answer.status !== 'PENDING') settled.push({ due, answer });
        else if (isStuck(req, due)) stuck.add(due.transaction_on);
      } catch (error) {
        failed++;
        batch.push({ ...row, error: lookupError(error) });
        // A failed check is a check: the open stuck_pending's evidence says when and what failed.
        if (isStuck(req, due)) stuck.add(due.transaction_on);
      }
      if (batch.length >= RECORD_EVERY) await record();
      req.onProgress?.(i + 1);
    }
  } finally {
    await record();
  }
  const loadId = settled.length > 0 ? await applySettled(db, req, settled, rows.length - failed) : null;
  const dates = new Set([...settled.map((s) => s.due.transaction_on), ...stuck]);
  return {
    account: req.account,
    nonFinal,
    lookedUp: rows.length,
    failed,
    settled: settled.length,
    stillPending: rows.length - failed - settled.length,
    loadId,
    dates: [...dates].sort(),
  };
}

/**
 * Writes the final answers into provider_transactions in one load: for each row still PENDING, its
 * earlier version into row_history, then the new status (the answer's fee and error code when it gives
 * them), for all answers in one statement. Serialised with report loads by their table lock (ingest/load/merge-staging.ts).
 */
async function applySettled(
  db: Kysely<Database>,
  req: FollowUpRequest,
  settled: readonly { due: Due; answer: StatusAnswer }[],
  answered: number,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await sql`lock table provider_transactions in share row exclusive mode`.execute(trx);
    const load = await trx
      .insertInto('loads')
      .values({
        account: req.account,
        source: 'status-lookup',
        environment: req.environment,
        origin: req.origin,
        format: 'report-json',
        query_type: 'transaction-status',
        status: 'running',
        workflow_id: req.workflowId ?? null,
      })
      .returning('load_id')
      .executeTakeFirstOrThrow();
    // One statement for the night's answers: each row still PENDING keeps its earlier version in
    // row_history and takes the answer's status (its fee and error code when it gives them).
    const answers = JSON.stringify(
      settled.map(({ due, answer }) => ({
        transaction_id: due.transaction_id,
        status: answer.status,
        raw_status: answer.raw_status,
        fee_cents: answer.fee_cents,
        error_code: answer.error_code,
      })),
    );
    const r = await sql<{ n: number }>`
      with a as (
        select * from jsonb_to_recordset(${answers}::jsonb)
          as a(transaction_id text, status text, raw_status text, fee_cents bigint, error_code text)),
      prev as (
        select to_jsonb(t) as previous, t.transaction_id, t.raw_status, t.fee_cents, t.error_code
        from provider_transactions t join a using (transaction_id)
        where t.account = ${req.account} and t.status = 'PENDING'),
      upd as (
        update provider_transactions t set status = a.status, raw_status = a.raw_status,
          fee_cents = coalesce(a.fee_cents, t.fee_cents), error_code = coalesce(a.error_code, t.error_code),
          load_id = ${load.load_id}, updated_at = now()
        from a join prev using (transaction_id)
        where t.account = ${req.account} and t.transaction_id = a.transaction_id
        returning 1),
      hist as (
        insert into row_history (table_name, row_key, previous, changed_columns, load_id, account)
        select 'provider_transactions', prev.transaction_id, prev.previous, array_remove(array[
          'status',
          case when prev.raw_status is distinct from a.raw_status then 'raw_status' end,
          case when a.fee_cents is not null and prev.fee_cents is distinct from a.fee_cents then 'fee_cents' end,
          case when a.error_code is not null and prev.error_code is distinct from a.error_code then 'error_code' end
        ]::text[], null), ${load.load_id}, ${req.account}
        from prev join a using (transaction_id) returning 1)
      select (select count(*) from upd)::int as n`.execute(trx);
    const updated = r.rows[0]?.n ?? 0;
    await trx
      .updateTable('loads')
      .set({
        status: 'committed',
        rows_read: answered,
        rows_loaded: answered,
        rows_updated: updated,
        rows_unchanged: answered - updated,
        finished_at: sql<string>`clock_timestamp()`,
      })
      .where('load_id', '=', load.load_id)
      .execute();
    return load.load_id;
  });
}
