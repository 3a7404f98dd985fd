import type {
  AdjustmentRecord,
  LedgerRecord,
  LegacyTransactionRecord,
  ReturnRecord,
  TransactionRecord,
} from '../domain/records.ts';
import { createHistory, type History, type HistoryOptions, type HistoryTransaction } from './history.ts';
import { checkFee, SANDBOX_FEE_SCHEDULE, type FeeScheduleEntry } from './merchant-view/fee-schedule.ts';
import {
  plantLedgerEntry,
  plantLedgerOnlyEntry,
  plantLegacyLedgerEntry,
  plantReturnBooking,
} from './merchant-view/ledger.ts';
import { NearMissPlanting, type NearMiss } from './merchant-view/near-misses.ts';
import { notificationBody, plantNotification } from './merchant-view/notifications.ts';
import { plantStuckPending } from './merchant-view/pending.ts';
import { addDays } from '../domain/time/calendar.ts';
import {
  businessDateOf,
  draw,
  expect,
  hashSeed,
  plusMs,
  type ExpectedDiscrepancy,
  type NotificationHistoryEntry,
  type Planting,
} from './merchant-view/planting.ts';
import { DEFAULT_RATES, type InjectionRates } from './merchant-view/rates.ts';
import {
  plantAdjustmentBookings,
  plantLedgerOnlyAdjustment,
  plantReturnNotification,
  plantUnreportedReturn,
} from './merchant-view/returns-and-adjustments.ts';

/**
 * The merchant's side of a sandbox history, and the ground truth of reconciliation: from the
 * provider history (sandbox/history.ts) and a seed, it derives the merchant ledger, the
 * notification history the merchant received, the contracted fee schedule, and the exact list of
 * discrepancies reconciliation must find. The merchant side disagrees with the provider in known,
 * countable ways, each at a known rate (see InjectionRates in merchant-view/rates.ts); provider-side facts that are
 * discrepancies by themselves (notifications the provider reports as not sent, legacy rows that
 * disagree with the report, fees off the contract) are read from the history and counted too.
 *
 * Near misses (merchant-view/near-misses.ts) are ledger entries a person must pair by hand: mistyped
 * ids, split and combined bookings; {@link MerchantView.nearMisses} lists them. Fees one cent above
 * the contract are the history's (feeOneCentOffRate), found by the fee check like any other.
 *
 * One provider-side fact the history does not produce is injected here: duplicate submissions (a
 * second provider transaction for a merchant transaction id). They are added to the history itself
 * ({@link History.add}), so a sandbox serving `view.history` reports them like any other transaction.
 *
 * The merchant books everything the provider moved, the legacy e-transfer product's transactions and
 * returns included (the pipeline loads them into provider_transactions / provider_returns, and a
 * legacy-only transaction nobody booked is missing_in_ledger). Legacy rows carry no documented type
 * or notification status, so no type or notification discrepancy is planted on them.
 *
 * Everything is a pure function of the options: the same options give the same view. Sized for
 * tests (the arrays are held in memory); the benchmark generates its data in SQL instead.
 */

export { SANDBOX_FEE_SCHEDULE, type FeeScheduleEntry } from './merchant-view/fee-schedule.ts';
export type { ExpectedDiscrepancy, NotificationHistoryEntry } from './merchant-view/planting.ts';
export type { NearMiss, NearMissKind } from './merchant-view/near-misses.ts';
export { DEFAULT_RATES, type InjectionRates } from './merchant-view/rates.ts';

export interface MerchantViewOptions {
  readonly seed: number | string;
  readonly transactions: number;
  readonly from: string;
  readonly to: string;
  readonly rates?: Partial<InjectionRates>;
  /** The provider account's ids, settlement currency and merchant transaction id tag (history options). */
  readonly account?: Pick<
    HistoryOptions,
    'merchantId' | 'legacyMerchantId' | 'currency' | 'merchantTransactionTag'
  >;
}

export interface MerchantView {
  readonly history: History;
  /** Instant the view is taken at (history default asOf: everything settled); pass it as `now`. */
  readonly asOf: string;
  /** First and last Eastern dates that hold data (returns come up to ~10 days after `to`). */
  readonly range: { from: string; to: string };
  readonly providerTransactions: TransactionRecord[];
  readonly providerReturns: ReturnRecord[];
  /** Legacy type 5 records (channels legacy and both). */
  readonly legacyTransactions: LegacyTransactionRecord[];
  /** Legacy type 1 records (returns of legacy-visible transactions, channels legacy and both). */
  readonly legacyReturns: ReturnRecord[];
  /** Legacy type 4 records, keyed as the loader keys them. */
  readonly providerAdjustments: AdjustmentRecord[];
  readonly ledger: LedgerRecord[];
  readonly notifications: NotificationHistoryEntry[];
  /** How many of `notifications` are refused for their content (notification_quarantined). */
  readonly quarantinedNotifications: number;
  readonly feeSchedule: FeeScheduleEntry[];
  readonly expected: ExpectedDiscrepancy[];
  /** The near misses planted (mistyped ids, split and combined bookings): what a person would match by hand. */
  readonly nearMisses: NearMiss[];
}

/** Derives the merchant view and the ground truth; see the module comment. */
/**
 * The returns of the view (report, and legacy-only ones through the legacy type 1 query) with their
 * bookings and notifications, and the adjustments with theirs.
 */
function plantReturnsAndAdjustments(p: Planting, history: ReturnType<typeof createHistory>, asOf: string) {
  const providerReturns = [...history.returns({ asOf })];
  const legacyReturns = [...history.legacyReturns({ asOf })];
  const reportReturnIds = new Set(providerReturns.map((r) => r.return_transaction_id));
  // Returns of legacy-only transactions reach the warehouse through the legacy type 1 query.
  const legacyOnlyReturns = legacyReturns.filter((r) => !reportReturnIds.has(r.return_transaction_id));
  const allReturns = [...providerReturns, ...legacyOnlyReturns];
  allReturns.forEach((r, j) => plantReturnBooking(p, j, r));
  const merchantId = history.options.merchantId;
  providerReturns.forEach((r, j) => {
    const f = history.findByReturnTransactionId(r.return_transaction_id);
    if (f) plantReturnNotification(p, j, r, f, merchantId);
  });
  const providerAdjustments = plantAdjustmentBookings(p, [...history.adjustments({ asOf })]);
  return { providerReturns, legacyReturns, allReturns, providerAdjustments };
}

export function deriveMerchantView(options: MerchantViewOptions): MerchantView {
  const rates = { ...DEFAULT_RATES, ...options.rates };
  const p: Planting = {
    seed: hashSeed(options.seed),
    rates,
    ledger: [],
    notifications: [],
    quarantined: 0,
    expected: [],
  };
  const history = createHistory({
    seed: options.seed,
    transactions: options.transactions,
    from: options.from,
    to: options.to,
    legacyConflictRate: rates.sourceConflict,
    feeOneCentOffRate: rates.feeOneCentOff,
    ...options.account,
  });
  const asOf = `${addDays(options.to, 31)}T05:00:00.000Z`;
  const providerTransactions: TransactionRecord[] = [];
  const doubles: { t: TransactionRecord; f: HistoryTransaction | undefined }[] = [];
  const nearMisses = new NearMissPlanting();
  const unexplainedDays = new Set<string>();
  let i = 0;
  for (const t of history.transactions({ asOf })) {
    const f = history.findByTransactionId(t.transaction_id);
    providerTransactions.push(t);
    checkFee(p, t);
    plantNotification(p, i, f, t);
    plantStuckPending(p, t, asOf);
    if (f?.legacyConflict)
      expect(
        p,
        `source_conflict:${t.transaction_id}`,
        'source_conflict',
        t.amount_cents,
        t.amount_cents + 100,
        businessDateOf(t),
      );
    // A second provider transaction for the same merchant transaction id (a double submission),
    // added to the history once this walk over it is done.
    const doubled = t.status === 'SUCCESSFUL' && draw(p.seed, i, 7) < rates.duplicateMerchantTransaction;
    if (!nearMisses.hold(p, i, t, f, doubled)) plantLedgerEntry(p, i, t);
    if (doubled) doubles.push({ t, f });
    plantLedgerOnlyEntry(p, i, t);
    if (f && !f.return) plantUnreportedReturn(p, i, t);
    plantLedgerOnlyAdjustment(p, i, t, unexplainedDays);
    i++;
  }
  for (const { t, f } of doubles) providerTransactions.push(addDoubleSubmission(p, history, t, f));

  const legacyTransactions = [...history.legacyTransactions({ asOf, queryType: '5' })];
  for (const g of legacyTransactions) {
    const f = history.findByTransactionId(g.transaction_id);
    if (!f || f.channel !== 'legacy') continue;
    plantLegacyLedgerEntry(p, i, g, f);
    i++;
  }
  // Booked once every other merchant transaction id is known, so that a mistyped one is nobody's.
  const taken = new Set<string>([
    ...providerTransactions.map((t) => t.merchant_transaction_id!),
    ...legacyTransactions.map((g) => g.merchant_transaction_id!),
    ...p.ledger.map((l) => l.merchant_transaction_id),
  ]);
  const planted = nearMisses.plantAll(p, taken);

  const { providerReturns, legacyReturns, allReturns, providerAdjustments } = plantReturnsAndAdjustments(
    p,
    history,
    asOf,
  );

  // The last day that holds data or a planted discrepancy (a return, an adjustment, a representment's
  // next action date): the range a run must cover to see them all.
  const lastDay = [
    ...allReturns.map((r) => r.returned_on ?? options.to),
    ...providerAdjustments.map((a) => a.adjusted_on),
    ...p.expected.map((e) => e.businessDate),
  ].reduce((d, x) => (x > d ? x : d), addDays(options.to, 1));
  return {
    history,
    asOf,
    range: { from: options.from, to: lastDay },
    providerTransactions,
    providerReturns,
    legacyTransactions,
    legacyReturns,
    providerAdjustments,
    ledger: p.ledger,
    notifications: p.notifications,
    quarantinedNotifications: p.quarantined,
    feeSchedule: SANDBOX_FEE_SCHEDULE,
    expected: p.expected.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
    nearMisses: planted,
  };
}

/**
 * A double submission of `t`: received at the same instant as the original (which keeps the ledger
 * entry: same values and time, smaller id), settled at once, notified. Returns its report record.
 */
function addDoubleSubmission(
  p: Planting,
  history: History,
  t: TransactionRecord,
  f: HistoryTransaction | undefined,
): TransactionRecord {
  const added = history.add({
    type: t.transaction_type as 'DEBIT' | 'CREDIT',
    amountCents: t.amount_cents,
    currency: t.currency,
    merchantTransactionId: t.merchant_transaction_id!,
    merchantUserId: t.merchant_user_id!,
    at: t.transaction_at!,
  });
  const dup = [...history.transactions({ start: added.at, end: plusMs(added.at, 1) })].find(
    (r) => r.transaction_id === added.transactionId,
  )!;
  expect(
    p,
    `duplicate_merchant_transaction:${dup.transaction_id}`,
    'duplicate_merchant_transaction',
    null,
    dup.amount_cents,
    businessDateOf(dup),
  );
  checkFee(p, dup);
  p.notifications.push({
    kind: 'transaction',
    received_at: plusMs(dup.transaction_at!, 5000),
    payload: notificationBody(f, dup),
  });
  return dup;
}
