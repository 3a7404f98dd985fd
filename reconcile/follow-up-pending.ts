import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { redactPersonal } from '../domain/privacy.ts';
import { canonicalProviderStatus } from '../domain/status.ts';
import { isValidDate } from '../domain/time/calendar.ts';

/**
 * Asks the provider for the status of one transaction (docs/provider-interface.md 2.4) and returns the
 * answer as parsed JSON. Area 3's `createProviderClient(config).transactionStatus` fits.
 */
export type LookupStatus = (transactionId: string) => Promise<Record<string, unknown>>;

export interface FollowUpRequest {
  readonly lookupStatus: LookupStatus;
  /** Default now (ISO). */
  readonly now?: string;
  /** Look up transactions PENDING for longer than this (default 24 h). */
  readonly pendingForHours?: number;
  /** Do not ask again about a transaction looked up less than this long ago (default: pendingForHours). */
  readonly askAgainAfterHours?: number;
  /** At most this many lookups per call (default 200): the endpoint's rate limits are not shown. */
  readonly limit?: number;
}

export interface FollowUpSummary {
  readonly lookedUp: number;
  readonly failed: number;
  /** Answers with a final status (not PENDING). */
  readonly settled: number;
}

/** Keys that identify a consumer's bank account: never stored. */
const TOKEN_KEYS = new Set(['obvToken', 'accountToken']);

/** A deep copy without account tokens. */
export function withoutAccountTokens(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutAccountTokens);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !TOKEN_KEYS.has(k))
        .map(([k, v]) => [k, withoutAccountTokens(v)]),
    );
  }
  return value;
}

function text(v: unknown): string | null {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null;
}

/**
 * Follows up transactions still PENDING after the configured age through the status endpoint and
 * stores each answer in status_lookups (status, fee, error and return codes, representment date; the
 * response without account tokens). A failed lookup is stored with its error and retried on a later
 * call; it is never thrown. The provider rows are not changed: the next report load restates them.
 */
export async function followUpPendingTransactions(
  db: Kysely<Database>,
  req: FollowUpRequest,
): Promise<FollowUpSummary> {
  const now = req.now ?? new Date().toISOString();
  const pendingFor = req.pendingForHours ?? 24;
  const again = req.askAgainAfterHours ?? pendingFor;
  const due = await db
    .selectFrom('provider_transactions as p')
    .select('p.transaction_id')
    .where('p.status', '=', 'PENDING')
    .where(
      'p.transaction_at',
      '<',
      sql<string>`${now}::timestamptz - make_interval(hours => ${pendingFor}::int)`,
    )
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('status_lookups as s')
            .select('s.lookup_id')
            .whereRef('s.transaction_id', '=', 'p.transaction_id')
            .where(
              's.looked_up_at',
              '>',
              sql<string>`${now}::timestamptz - make_interval(hours => ${again}::int)`,
            ),
        ),
      ),
    )
    .orderBy('p.transaction_at')
    .limit(req.limit ?? 200)
    .execute();
  let failed = 0;
  let settled = 0;
  for (const { transaction_id } of due) {
    try {
      const answer = await req.lookupStatus(transaction_id);
      const txn = (answer.transaction ?? {}) as Record<string, unknown>;
      const rawStatus = text(txn.transactionStatus);
      const status = canonicalProviderStatus(rawStatus);
      const fee = txn.transactionFee;
      const next = text(txn.nextActionDate);
      await db
        .insertInto('status_lookups')
        .values({
          transaction_id,
          status,
          raw_status: rawStatus,
          fee_cents: typeof fee === 'number' && Number.isSafeInteger(fee) ? fee : null,
          error_code: text(txn.errorCode),
          return_code: text(txn.returnCode),
          next_action_date: next && isValidDate(next) ? next : null,
          response: JSON.stringify(withoutAccountTokens(answer)),
          looked_up_at: now,
        })
        .execute();
      if (status && status !== 'PENDING') settled++;
    } catch (error) {
      failed++;
      // Typed provider errors carry no secrets; only the name and message are kept, redacted (an
      // answer quoted in a message could hold the consumer's account).
      await db
        .insertInto('status_lookups')
        .values({
          transaction_id,
          error: redactPersonal(`${(error as Error).name}: ${(error as Error).message}`),
          looked_up_at: now,
        })
        .execute();
    }
  }
  return { lookedUp: due.length, failed, settled };
}
