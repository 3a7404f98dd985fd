import { HOUR_MICROS, parseIsoMicros } from './formats/eastern-clock.ts';
import { addDays, daysInclusive, isValidDate } from '../domain/time/calendar.ts';
import { easternDayStartMs as easternMidnightMs } from '../domain/time/eastern.ts';
import { addedTransaction, generateTransaction, hashString, type HistoryLayout } from './history/generate.ts';
import {
  toAdjustmentRecord,
  toLegacyRecord,
  toReturnRecord,
  toTransactionRecord,
} from './history/records.ts';
import type { History, HistoryOptions, HistoryQuery, HistoryTransaction } from './history/types.ts';

/**
 * A deterministic synthetic provider history: the merchant's payins and payouts, their returns and
 * adjustments, as the sandbox provider reports them. Everything about transaction `i` is computed
 * from `seed` and `i` alone ({@link History.fact}), so a window of a million-row history streams
 * without holding the history in memory, and two processes with the same options see the same data.
 *
 * What it contains (rates are per transaction, fixed by the seed):
 * - payins (DEBIT, ~70%) and payouts (CREDIT); amounts 100..100000000 cents, both limits included;
 *   ~4% USD, the rest CAD; a fee on every successful transaction;
 * - ~8% REJECTED (risk) and ~3% FAILED (processing error; the report API can only say REJECTED,
 *   notifications say FAILED); ~10% of report-only ones PENDING before they settle (most for one to
 *   three days, one in ten of them for 5 to 59 days: the nightly follow-up follows them to their end);
 * - ~4% of successful payins and ~1% of payouts returned 2 to 6 days after settlement, with an EFT
 *   return code and, for half of them, a next action (representment) date 5 days after the return;
 * - ~2% adjusted 1 to 3 days later (legacy adjustment report only);
 * - channel: ~75% report API only, ~15% the legacy e-transfer product only, ~10% both (the same
 *   transaction id in both sources, consistent values unless {@link HistoryOptions.legacyConflictRate});
 * - on daylight-saving days ~1/8 of the day's transactions fall within an hour of the change: around
 *   the skipped hour in March, inside the repeated hour in November (both sides for report-only
 *   transactions; legacy-visible ones are kept on the daylight side, see below);
 * - timestamps to the microsecond.
 *
 * Legacy CSV times are Eastern wall times with whole seconds; a wall time in the repeated hour is read
 * back with the earlier (daylight) offset. So that legacy round trips are exact, transactions that the
 * legacy interface shows and that fall in the standard-time side of the repeated hour are moved one
 * hour earlier (to the daylight side, same wall time); their legacy records carry local_time_flag
 * 'dst_fold'. Legacy transaction_at is the instant truncated to the second, as the CSV can only say.
 *
 * Statuses depend on when you ask ({@link HistoryQuery.asOf}): a transaction is PENDING until its
 * settlement instant, a return exists from its return instant on. The default asOf is the end of the
 * last day plus 30 days, when everything has settled and every return has happened.
 *
 * Raw codes the provider does not document (legacy transaction type, status other than S, adjustment
 * type, notification status, error codes) are sandbox inventions, listed in {@link LEGACY_CODES}.
 */

export type {
  AddedTransaction,
  Channel,
  History,
  HistoryAdjustment,
  HistoryOptions,
  HistoryQuery,
  HistoryReturn,
  HistoryTransaction,
  Outcome,
} from './history/types.ts';
export { LEGACY_CODES } from './history/types.ts';

const DAY_MICROS = 24 * HOUR_MICROS;

function seedOf(seed: number | string): number {
  return typeof seed === 'number' ? seed >>> 0 : hashString(seed);
}

/** Three base-36 characters of the seed, in every id of the history. */
function tagOf(seed: number | string): string {
  return (seedOf(seed) % 46656).toString(36).toUpperCase().padStart(3, '0');
}

/** Creates the history. Cheap: nothing is generated until asked. */
export function createHistory(input: HistoryOptions): History {
  const h = planHistory(input);
  const { options, n, added } = h;
  const idPattern = new RegExp(`^T${h.layout.tag}(\\d{10})$`);
  const returnIdPattern = new RegExp(`^R${h.layout.tag}(\\d{10})$`);
  const fact = (index: number) => factAt(h, index);
  return {
    options,
    get size() {
      return n + added.length;
    },
    fact,
    findByTransactionId(transactionId) {
      const m = idPattern.exec(transactionId);
      if (!m) return undefined;
      const i = Number(m[1]);
      return i < n + added.length ? fact(i) : undefined;
    },
    findByReturnTransactionId(returnTransactionId) {
      const m = returnIdPattern.exec(returnTransactionId);
      if (!m) return undefined;
      const i = Number(m[1]);
      const f = i < n + added.length ? fact(i) : undefined;
      return f?.return ? f : undefined;
    },
    *facts(q) {
      const { startUs, endUs, asOfUs } = bounds(h, q);
      yield* factsReceived(h, startUs, endUs, asOfUs);
    },
    *transactions(q) {
      const { startUs, endUs, asOfUs } = bounds(h, q);
      for (const f of factsReceived(h, startUs, endUs, asOfUs)) {
        if (f.channel !== 'legacy') yield toTransactionRecord(options, f, asOfUs);
      }
    },
    *returns(q) {
      const { startUs, endUs, asOfUs } = bounds(h, q);
      for (const f of factsReturned(h, startUs, endUs, asOfUs)) {
        if (f.channel !== 'legacy') yield toReturnRecord(options, f, false);
      }
    },
    *legacyTransactions(q) {
      const { startUs, endUs, asOfUs } = bounds(h, q);
      for (const f of factsReceived(h, startUs, endUs, asOfUs)) {
        if (f.channel !== 'report') yield toLegacyRecord(options, f, q?.queryType ?? '5', asOfUs);
      }
    },
    *legacyReturns(q) {
      const { startUs, endUs, asOfUs } = bounds(h, q);
      for (const f of factsReturned(h, startUs, endUs, asOfUs)) {
        if (f.channel !== 'report') yield toReturnRecord(options, f, true);
      }
    },
    *adjustments(q) {
      const { startUs, endUs, asOfUs } = bounds(h, q);
      const from = startUs === Number.MIN_SAFE_INTEGER ? startUs : startUs - 4 * DAY_MICROS;
      for (const f of factsReceived(h, from, endUs, asOfUs)) {
        if (!f.adjustment) continue;
        const atUs = easternMidnightMs(f.adjustment.adjustedOn) * 1000;
        if (atUs >= startUs && atUs < endUs && atUs <= asOfUs) yield toAdjustmentRecord(options, f);
      }
    },
    add(tx) {
      const f = addedTransaction(h.layout.tag, n + added.length, tx);
      added.push(f);
      return f;
    },
  };
}

/** A history's plan: its options, how its `n` generated transactions spread over its days, and those added since. */
interface HistoryPlan {
  readonly options: Required<HistoryOptions>;
  readonly layout: HistoryLayout;
  readonly n: number;
  readonly dayCount: number;
  readonly defaultAsOfUs: number;
  readonly added: HistoryTransaction[];
}

/** Checks the options and lays the transactions out over the days. */
function planHistory(input: HistoryOptions): HistoryPlan {
  if (!Number.isSafeInteger(input.transactions) || input.transactions < 0) {
    throw new RangeError(`transactions must be a non-negative integer, got ${input.transactions}`);
  }
  const dayCount = isValidDate(input.from) && isValidDate(input.to) ? daysInclusive(input.from, input.to) : 0;
  if (dayCount < 1) {
    throw new RangeError(`from..to must be YYYY-MM-DD days in order, got ${input.from}..${input.to}`);
  }
  const options: Required<HistoryOptions> = {
    seed: input.seed,
    transactions: input.transactions,
    from: input.from,
    to: input.to,
    merchantId: input.merchantId ?? 'IBTMERCH0001',
    legacyMerchantId: input.legacyMerchantId ?? 'EXF00001',
    legacyConflictRate: input.legacyConflictRate ?? 0,
    feeOneCentOffRate: input.feeOneCentOffRate ?? 0,
    currency: input.currency ?? null,
    merchantTransactionTag: input.merchantTransactionTag ?? tagOf(input.seed),
  };
  const n = input.transactions;
  const dayStartUs: number[] = [];
  for (let d = 0; d <= dayCount; d++) dayStartUs.push(easternMidnightMs(addDays(input.from, d)) * 1000);
  return {
    options,
    layout: {
      options,
      seed: seedOf(input.seed),
      tag: tagOf(input.seed),
      dayStartUs,
      dayOfIndex: (i) => Math.floor((i * dayCount) / n),
    },
    n,
    dayCount,
    defaultAsOfUs: Date.parse(defaultAsOf(input)) * 1000,
    added: [],
  };
}

function factAt(h: HistoryPlan, index: number): HistoryTransaction {
  if (index >= 0 && index < h.n) return generateTransaction(h.layout, index);
  const extra = h.added[index - h.n];
  if (!extra) throw new RangeError(`no transaction ${index}: the history has ${h.n + h.added.length}`);
  return extra;
}

function bounds(h: HistoryPlan, q: HistoryQuery = {}) {
  return {
    startUs: q.start ? parseIsoMicros(q.start) : Number.MIN_SAFE_INTEGER,
    endUs: q.end ? parseIsoMicros(q.end) : Number.MAX_SAFE_INTEGER,
    asOfUs: q.asOf ? parseIsoMicros(q.asOf) : h.defaultAsOfUs,
  };
}

/** Indices of the generated transactions received on Eastern days overlapping [startUs, endUs). */
function* indicesBetween(h: HistoryPlan, startUs: number, endUs: number): Generator<number> {
  const { n, dayCount } = h;
  const { dayStartUs } = h.layout;
  if (n === 0) return;
  const firstIndexOfDay = (d: number) => Math.ceil((d * n) / dayCount);
  let d0 = 0;
  while (d0 < dayCount && dayStartUs[d0 + 1]! <= startUs) d0++;
  let d1 = dayCount;
  while (d1 > d0 && dayStartUs[d1 - 1]! >= endUs) d1--;
  const last = Math.min(n, firstIndexOfDay(d1));
  for (let i = firstIndexOfDay(d0); i < last; i++) yield i;
}

function* factsReceived(
  h: HistoryPlan,
  startUs: number,
  endUs: number,
  asOfUs: number,
): Generator<HistoryTransaction> {
  for (const i of indicesBetween(h, startUs, endUs)) {
    const f = generateTransaction(h.layout, i);
    if (f.atMicros >= startUs && f.atMicros < endUs && f.atMicros <= asOfUs) yield f;
  }
  // Added transactions happened for real (now): asOf, which dates the synthetic history, ignores them.
  for (const f of h.added) if (f.atMicros >= startUs && f.atMicros < endUs) yield f;
}

/** Transactions with a return in [startUs, endUs): received at most 7 days before the window. */
function* factsReturned(
  h: HistoryPlan,
  startUs: number,
  endUs: number,
  asOfUs: number,
): Generator<HistoryTransaction> {
  const from = startUs === Number.MIN_SAFE_INTEGER ? startUs : startUs - 10 * DAY_MICROS;
  for (const f of factsReceived(h, from, endUs, asOfUs)) {
    const ret = f.return;
    if (
      ret &&
      ret.returnedAtMicros >= startUs &&
      ret.returnedAtMicros < endUs &&
      ret.returnedAtMicros <= asOfUs
    ) {
      yield f;
    }
  }
}

/** The default asOf of a history: the end of its last day plus 30 days, when all has settled. */
export function defaultAsOf(options: Pick<HistoryOptions, 'to'>): string {
  return new Date(easternMidnightMs(addDays(options.to, 31))).toISOString();
}
