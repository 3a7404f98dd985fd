import { redactPersonal } from '../../domain/privacy.ts';
import type { CanonicalStatus } from '../../domain/records.ts';
import { canonicalProviderStatus } from '../../domain/status.ts';
import { isValidDate } from '../../domain/time/calendar.ts';

/**
 * One answer of the transaction status endpoint (docs/provider-interface.md, transaction status) as
 * the warehouse keeps it: in status_lookups, and, when it is final, as the status of the provider row.
 */

/** Asks the provider for the status of one transaction; the answer as parsed JSON. */
export type LookupStatus = (transactionId: string) => Promise<Record<string, unknown>>;

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

export interface StatusAnswer {
  readonly status: CanonicalStatus | null;
  readonly raw_status: string | null;
  readonly fee_cents: number | null;
  readonly error_code: string | null;
  readonly return_code: string | null;
  readonly next_action_date: string | null;
  /** The answer without account tokens, as JSON text. */
  readonly response: string;
}

/** Reads the StatusTransaction of an answer (provider-api 2.5); a value that fails its form is null. */
export function readStatusAnswer(answer: Record<string, unknown>): StatusAnswer {
  const txn = (answer.transaction ?? {}) as Record<string, unknown>;
  const rawStatus = text(txn.transactionStatus);
  const fee = txn.transactionFee;
  const next = text(txn.nextActionDate);
  return {
    status: canonicalProviderStatus(rawStatus),
    raw_status: rawStatus,
    fee_cents: typeof fee === 'number' && Number.isSafeInteger(fee) && fee >= 0 ? fee : null,
    error_code: text(txn.errorCode),
    return_code: text(txn.returnCode),
    next_action_date: next && isValidDate(next) ? next : null,
    response: JSON.stringify(withoutAccountTokens(answer)),
  };
}

/**
 * A failed lookup as stored: the typed provider error's name and message (they carry no secret),
 * redacted (an answer quoted in a message could hold the consumer's account).
 */
export function lookupError(error: unknown): string {
  const e = error as Error;
  return redactPersonal(`${e?.name ?? 'Error'}: ${e?.message ?? String(error)}`);
}
