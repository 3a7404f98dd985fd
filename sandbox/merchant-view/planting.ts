import type { LedgerRecord, TransactionRecord } from '../../domain/records.ts';
import { easternDateOf } from '../../domain/time/eastern.ts';
import type { InjectionRates } from './rates.ts';

/**
 * What the derivation of a merchant view accumulates (ledger, notifications, expected discrepancies)
 * and the seeded draws that decide each disagreement.
 */

export interface NotificationHistoryEntry {
  readonly kind: 'transaction' | 'return';
  readonly received_at: string;
  readonly payload: unknown;
}

export interface ExpectedDiscrepancy {
  /** reconcile's discrepancy_key. */
  readonly key: string;
  readonly kind: string;
  readonly expectedAmountCents: number | null;
  readonly actualAmountCents: number | null;
  /** Eastern business date reconciliation files it under (discrepancies.business_date). */
  readonly businessDate: string;
}

export interface Planting {
  /** The merchant's seed as a 32-bit number (see hashSeed). */
  readonly seed: number;
  readonly rates: InjectionRates;
  readonly ledger: LedgerRecord[];
  readonly notifications: NotificationHistoryEntry[];
  /** How many of `notifications` the receiver refuses for their content (they go to quarantine). */
  quarantined: number;
  readonly expected: ExpectedDiscrepancy[];
}

export function expect(
  p: Planting,
  key: string,
  kind: string,
  expectedAmountCents: number | null,
  actualAmountCents: number | null,
  businessDate: string,
): void {
  p.expected.push({ key, kind, expectedAmountCents, actualAmountCents, businessDate });
}

/** The Eastern business date reconciliation files a provider transaction under. */
export const businessDateOf = (t: TransactionRecord): string => easternDateOf(t.transaction_at!);

export function hashSeed(seed: number | string): number {
  if (typeof seed === 'number') return seed >>> 0;
  let h = 0x811c9dc5;
  for (let k = 0; k < seed.length; k++) h = Math.imul(h ^ seed.charCodeAt(k), 0x01000193);
  return h >>> 0;
}

/** Uniform [0, 1) from (seed, index, salt); the salts keep the merchant's draws apart from the provider's. */
export function draw(seed: number, i: number, salt: number): number {
  let h = (seed ^ Math.imul(i + 1, 0x27d4eb2f) ^ Math.imul(salt + 101, 0x165667b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return ((h ^ (h >>> 16)) >>> 0) / 0x1_0000_0000;
}

export function plusMs(iso: string, ms: number): string {
  return new Date(Date.parse(iso) + ms).toISOString();
}
