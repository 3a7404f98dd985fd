import type { TransactionRecord } from '../../domain/records.ts';
import { addDays } from '../../domain/time/calendar.ts';
import { easternDateOf } from '../../domain/time/eastern.ts';
import type { HistoryTransaction } from '../history.ts';
import { ledgerEntry, plantLedgerEntry } from './ledger.ts';
import { businessDateOf, draw, expect, plusMs, type Planting } from './planting.ts';

/**
 * Near misses: ledger entries that belong to a provider transaction but that matching on keys cannot
 * pair (docs/finance.md, Candidates and Manual matches). A person pairs them by hand:
 * - a mistyped id: the payin booked once, its merchant transaction id with two adjacent digits
 *   swapped or one digit dropped (missing_in_ledger and missing_at_provider; the entry is the
 *   provider transaction's best candidate, its id check passed);
 * - a split booking: one payin booked as two entries, `<id>-1` and `<id>-2`, whose amounts add up to
 *   the payin's (missing_in_ledger, and missing_at_provider twice: a one-to-many match);
 * - a combined booking: two payins of one currency booked as one entry under the first one's id, for
 *   both amounts (amount_mismatch on the first, missing_in_ledger on the second: a many-to-one match).
 *
 * Only settled, successful payins that the report alone shows, with no return and no double
 * submission, are chosen, so that no other plant touches them. The ids are chosen once every other
 * id of the view is known, so that a mistyped id is nobody else's.
 */

export type NearMissKind = 'mistyped_id' | 'split_booking' | 'combined_booking';

/** What was planted, for the demo and the tests: the items a person would match. */
export interface NearMiss {
  readonly kind: NearMissKind;
  readonly providerTransactionIds: readonly string[];
  readonly ledgerMerchantTransactionIds: readonly string[];
}

interface Held {
  readonly i: number;
  readonly t: TransactionRecord;
  /** ordinary: held for a combined booking that found no partner, booked the ordinary way. */
  readonly kind: 'mistyped_id' | 'split_booking' | 'ordinary';
}

interface HeldPair {
  readonly kind: 'combined_booking';
  readonly a: TransactionRecord;
  readonly b: TransactionRecord;
}

/** The transactions held back from the ordinary ledger planting, to be booked as near misses. */
export class NearMissPlanting {
  private readonly held: (Held | HeldPair)[] = [];
  /** A payin to be booked together with the next one that qualifies (combinable with it). */
  private waiting: Held | undefined;

  /**
   * Holds report transaction `i` back when its draw makes it a near miss (its ledger entry is then
   * planted by {@link plantAll}); false when it is booked the ordinary way.
   */
  hold(
    p: Planting,
    i: number,
    t: TransactionRecord,
    f: HistoryTransaction | undefined,
    doubled: boolean,
  ): boolean {
    if (!f || f.channel !== 'report' || f.return || doubled) return false;
    if (t.status !== 'SUCCESSFUL' || t.transaction_type !== 'DEBIT') return false;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting && combinable(waiting.t, t)) {
      this.held.push({ kind: 'combined_booking', a: waiting.t, b: t });
      return true;
    }
    if (waiting) this.held.push({ ...waiting, kind: 'ordinary' });
    const u = draw(p.seed, i, 20);
    const { mistypedId, splitBooking, combinedBooking } = p.rates;
    const kind: NearMissKind | undefined =
      u < mistypedId
        ? 'mistyped_id'
        : u < mistypedId + splitBooking
          ? 'split_booking'
          : u < mistypedId + splitBooking + combinedBooking
            ? 'combined_booking'
            : undefined;
    if (!kind) return false;
    if (kind === 'combined_booking') this.waiting = { i, t, kind: 'ordinary' };
    else this.held.push({ i, t, kind });
    return true;
  }

  /** Books every held transaction, with ids none of `taken` (every other merchant transaction id). */
  plantAll(p: Planting, taken: Set<string>): NearMiss[] {
    const planted: NearMiss[] = [];
    if (this.waiting) this.held.push(this.waiting);
    this.waiting = undefined;
    for (const h of this.held) {
      if (h.kind === 'combined_booking') planted.push(plantCombined(p, h.a, h.b));
      else if (h.kind === 'mistyped_id') planted.push(...plantMistyped(p, h, taken));
      else if (h.kind === 'split_booking') planted.push(plantSplit(p, h));
      else plantLedgerEntry(p, h.i, h.t);
    }
    return planted;
  }
}

const booked = (t: TransactionRecord, ms: number) => plusMs(t.transaction_at!, ms);

/** Two payins booked as one: of one currency, within three days (b is the later one). */
const combinable = (a: TransactionRecord, b: TransactionRecord) =>
  a.currency === b.currency && businessDateOf(b) <= addDays(businessDateOf(a), 3);

/**
 * The ways to mistype `mtid`: two adjacent differing digits of its number (the digits it ends with)
 * swapped, or one of them dropped; the drawn kind first.
 */
export function mistypings(mtid: string, u: number, v: number): string[] {
  const start = mtid.length - (/\d*$/.exec(mtid)?.[0].length ?? 0);
  const digits = [...mtid].flatMap((_, k) => (k >= start ? [k] : []));
  // Every way of each kind, from a drawn position on: the first that is nobody's id is taken.
  const from = <T>(xs: T[]) => {
    const k = Math.floor(v * xs.length);
    return [...xs.slice(k), ...xs.slice(0, k)];
  };
  const swapped = from(digits.filter((k) => digits.includes(k + 1) && mtid[k] !== mtid[k + 1])).map(
    (k) => mtid.slice(0, k) + mtid[k + 1] + mtid[k] + mtid.slice(k + 2),
  );
  const dropped = from(digits).map((k) => mtid.slice(0, k) + mtid.slice(k + 1));
  return [...new Set(u < 0.5 ? [...swapped, ...dropped] : [...dropped, ...swapped])];
}

function plantMistyped(p: Planting, { i, t }: Held, taken: Set<string>): NearMiss[] {
  const id = mistypings(t.merchant_transaction_id!, draw(p.seed, i, 21), draw(p.seed, i, 22)).find(
    (m) => !taken.has(m),
  );
  if (!id) {
    plantLedgerEntry(p, i, t);
    return [];
  }
  taken.add(id);
  const entry = ledgerEntry(t, {
    merchant_transaction_id: id,
    transaction_id: null,
    booked_at: booked(t, 2000),
  });
  p.ledger.push(entry);
  expectMissingInLedger(p, t);
  expectMissingAtProvider(p, id, t.amount_cents, entry.booked_at);
  return [
    { kind: 'mistyped_id', providerTransactionIds: [t.transaction_id], ledgerMerchantTransactionIds: [id] },
  ];
}

function plantSplit(p: Planting, { i, t }: Held): NearMiss {
  // Amounts are at least 100 cents: both parts hold at least one cent.
  const first = 1 + Math.floor(draw(p.seed, i, 23) * (t.amount_cents - 1));
  const parts = [first, t.amount_cents - first].map((amount, k) => {
    const entry = ledgerEntry(t, {
      merchant_transaction_id: `${t.merchant_transaction_id}-${k + 1}`,
      transaction_id: null,
      amount_cents: amount,
      booked_at: booked(t, 2000 + k * 1000),
    });
    p.ledger.push(entry);
    const id = entry.merchant_transaction_id;
    expectMissingAtProvider(p, id, amount, entry.booked_at);
    return id;
  });
  expectMissingInLedger(p, t);
  return {
    kind: 'split_booking',
    providerTransactionIds: [t.transaction_id],
    ledgerMerchantTransactionIds: parts,
  };
}

function plantCombined(p: Planting, a: TransactionRecord, b: TransactionRecord): NearMiss {
  const amount = a.amount_cents + b.amount_cents;
  p.ledger.push(ledgerEntry(a, { amount_cents: amount, transaction_id: null, booked_at: booked(b, 2000) }));
  expect(
    p,
    `amount_mismatch:${a.transaction_id}`,
    'amount_mismatch',
    a.amount_cents,
    amount,
    businessDateOf(a),
  );
  expectMissingInLedger(p, b);
  return {
    kind: 'combined_booking',
    providerTransactionIds: [a.transaction_id, b.transaction_id],
    ledgerMerchantTransactionIds: [a.merchant_transaction_id!],
  };
}

/** The payin no ledger entry pairs with on keys: missing_in_ledger on its business date. */
function expectMissingInLedger(p: Planting, t: TransactionRecord): void {
  expect(
    p,
    `missing_in_ledger:${t.transaction_id}`,
    'missing_in_ledger',
    t.amount_cents,
    null,
    businessDateOf(t),
  );
}

/** A near miss's ledger entry, which no provider transaction has on keys: missing_at_provider on its booking's day. */
function expectMissingAtProvider(p: Planting, id: string, amountCents: number, bookedAt: string): void {
  expect(p, `missing_at_provider:${id}`, 'missing_at_provider', amountCents, null, easternDateOf(bookedAt));
}
