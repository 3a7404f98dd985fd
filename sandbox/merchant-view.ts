import type {
  LedgerRecord,
  LegacyTransactionRecord,
  ReturnRecord,
  TransactionRecord,
} from '../domain/records.ts';
import { contractedFeeCents, type FeeRule } from '../domain/fee-schedule.ts';
import { easternDateOf } from '../domain/time/eastern.ts';
import { createHistory, type History, type HistoryOptions, type HistoryTransaction } from './history.ts';

/**
 * The merchant's side of a sandbox history, and the ground truth of reconciliation: from the
 * provider history (sandbox/history.ts) and a seed, it derives the merchant ledger, the
 * notification history the merchant received, the contracted fee schedule, and the exact list of
 * discrepancies reconciliation must find. The merchant side disagrees with the provider in known,
 * countable ways, each at a known rate (see {@link InjectionRates}); provider-side facts that are
 * discrepancies by themselves (notifications the provider reports as not sent, legacy rows that
 * disagree with the report, fees off the contract) are read from the history and counted too.
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
export interface InjectionRates {
  missingInLedger: number;
  amountMismatch: number;
  currencyMismatch: number;
  typeMismatch: number;
  statusMismatch: number;
  /** Ledger-only entries, as a fraction of the provider transactions. */
  missingAtProvider: number;
  returnNotBooked: number;
  returnAmountMismatch: number;
  notificationMissing: number;
  notificationLate: number;
  notificationMismatch: number;
  feeVsNotification: number;
  duplicateMerchantTransaction: number;
  /** Passed to the history as legacyConflictRate. */
  sourceConflict: number;
  /** Notifications delivered twice (same body): never a discrepancy. */
  duplicateDelivery: number;
}

export const DEFAULT_RATES: InjectionRates = {
  missingInLedger: 0.02,
  amountMismatch: 0.02,
  currencyMismatch: 0.01,
  typeMismatch: 0.01,
  statusMismatch: 0.015,
  missingAtProvider: 0.015,
  returnNotBooked: 0.1,
  returnAmountMismatch: 0.1,
  notificationMissing: 0.02,
  notificationLate: 0.02,
  notificationMismatch: 0.02,
  feeVsNotification: 0.02,
  duplicateMerchantTransaction: 0.01,
  sourceConflict: 0.2,
  duplicateDelivery: 0.05,
};

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

export interface NotificationHistoryEntry {
  readonly kind: 'transaction' | 'return';
  readonly received_at: string;
  readonly payload: unknown;
}

export interface FeeScheduleEntry extends FeeRule {
  readonly product: string;
  readonly transactionType: 'DEBIT' | 'CREDIT';
  readonly currency: string;
  readonly validFrom: string;
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
  readonly ledger: LedgerRecord[];
  readonly notifications: NotificationHistoryEntry[];
  readonly feeSchedule: FeeScheduleEntry[];
  readonly expected: ExpectedDiscrepancy[];
}

/** The contract of the sandbox merchant: like the provider's fees, except USD payins (30 fixed, not 25). */
export const SANDBOX_FEE_SCHEDULE: FeeScheduleEntry[] = [
  {
    product: 'IBT',
    transactionType: 'DEBIT',
    currency: 'CAD',
    fixedCents: 25,
    basisPoints: 30,
    rounding: 'floor',
    validFrom: '2000-01-01',
  },
  {
    product: 'IBT',
    transactionType: 'CREDIT',
    currency: 'CAD',
    fixedCents: 40,
    basisPoints: 30,
    rounding: 'floor',
    validFrom: '2000-01-01',
  },
  {
    product: 'IBT',
    transactionType: 'DEBIT',
    currency: 'USD',
    fixedCents: 30,
    basisPoints: 30,
    rounding: 'floor',
    validFrom: '2000-01-01',
  },
];

/** Notification delay that makes a delivery late under the default settings (3600 s). */
const LATE_DELAY_MS = 2 * 3600 * 1000;

function hashSeed(seed: number | string): number {
  if (typeof seed === 'number') return seed >>> 0;
  let h = 0x811c9dc5;
  for (let k = 0; k < seed.length; k++) h = Math.imul(h ^ seed.charCodeAt(k), 0x01000193);
  return h >>> 0;
}

/** Uniform [0, 1) from (seed, index, salt); the salts keep the merchant's draws apart from the provider's. */
function draw(seed: number, i: number, salt: number): number {
  let h = (seed ^ Math.imul(i + 1, 0x27d4eb2f) ^ Math.imul(salt + 101, 0x165667b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return ((h ^ (h >>> 16)) >>> 0) / 0x1_0000_0000;
}

function plusMs(iso: string, ms: number): string {
  return new Date(Date.parse(iso) + ms).toISOString();
}

function addDays(date: string, n: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

const NOTIFY_STATUS = { SUCCESSFUL: 'SUCCESS', REJECTED: 'REJECTED', FAILED: 'FAILED' } as const;

function notificationBody(
  f: HistoryTransaction | undefined,
  t: TransactionRecord,
  over: Record<string, unknown> = {},
) {
  return {
    merchant: {
      merchantId: t.merchant_id,
      merchantTransactionId: t.merchant_transaction_id,
      merchantUserId: t.merchant_user_id,
    },
    accountInfo: f
      ? {
          accountToken: f.accountToken,
          accountLabel: f.accountLabel,
          accountType: f.accountType,
          fiName: f.bankName,
        }
      : {},
    transaction: {
      transactionId: t.transaction_id,
      transactionType: t.transaction_type,
      transactionStatus: f ? NOTIFY_STATUS[f.outcome] : t.status === 'SUCCESSFUL' ? 'SUCCESS' : 'REJECTED',
      transactionAmount: t.amount_cents,
      transactionFee: t.fee_cents,
      currencyCode: t.currency,
      ...(t.error_code ? { errorCode: t.error_code } : {}),
      ...over,
    },
  };
}

/** Derives the merchant view and the ground truth; see the module comment. */
export function deriveMerchantView(options: MerchantViewOptions): MerchantView {
  const rates = { ...DEFAULT_RATES, ...options.rates };
  const seed = hashSeed(options.seed);
  const history = createHistory({
    seed: options.seed,
    transactions: options.transactions,
    from: options.from,
    to: options.to,
    legacyConflictRate: rates.sourceConflict,
    ...options.account,
  });
  const asOf = `${addDays(options.to, 31)}T05:00:00.000Z`;
  const providerTransactions: TransactionRecord[] = [];
  const ledger: LedgerRecord[] = [];
  const notifications: NotificationHistoryEntry[] = [];
  const expected: ExpectedDiscrepancy[] = [];
  const expect = (key: string, kind: string, e: number | null, a: number | null, businessDate: string) =>
    expected.push({ key, kind, expectedAmountCents: e, actualAmountCents: a, businessDate });
  const on = (t: TransactionRecord) => easternDateOf(t.transaction_at!);

  const ledgerEntry = (t: TransactionRecord, over: Partial<LedgerRecord> = {}): LedgerRecord => ({
    kind: 'ledger',
    merchant_transaction_id: t.merchant_transaction_id!,
    transaction_type: t.transaction_type!,
    amount_cents: t.amount_cents,
    currency: t.currency,
    status: t.status === 'SUCCESSFUL' ? 'SUCCESSFUL' : 'REJECTED',
    booked_at: plusMs(t.transaction_at!, 2000),
    transaction_id: t.transaction_id,
    original_merchant_transaction_id: null,
    merchant_user_id: t.merchant_user_id,
    product: 'IBT',
    fee_cents: null,
    description: null,
    ...over,
  });

  const notify = (i: number, f: HistoryTransaction | undefined, t: TransactionRecord) => {
    if (t.status === 'PENDING') return;
    if (t.notify_status !== 'C') {
      expect(`notification_undelivered:${t.transaction_id}`, 'notification_undelivered', null, null, on(t));
      return;
    }
    const u = draw(seed, i, 2);
    let over: Record<string, unknown> = {};
    let delay = 1000 + Math.floor(draw(seed, i, 3) * 600_000);
    let c = rates.notificationMissing;
    if (u < c) {
      expect(`notification_missing:${t.transaction_id}`, 'notification_missing', null, null, on(t));
      return;
    }
    if (u < (c += rates.notificationLate)) {
      delay = LATE_DELAY_MS;
      expect(`notification_late:${t.transaction_id}`, 'notification_late', null, null, on(t));
    } else if (u < (c += rates.notificationMismatch)) {
      const amount = t.amount_cents < 100_000_000 ? t.amount_cents + 1 : t.amount_cents - 1;
      over = { transactionAmount: amount };
      expect(
        `notification_mismatch:${t.transaction_id}`,
        'notification_mismatch',
        t.amount_cents,
        amount,
        on(t),
      );
    } else if (u < c + rates.feeVsNotification) {
      over = { transactionFee: (t.fee_cents ?? 0) + 5 };
      expect(
        `fee_mismatch:fee_vs_notification:${t.transaction_id}`,
        'fee_mismatch',
        t.fee_cents,
        (t.fee_cents ?? 0) + 5,
        on(t),
      );
    }
    const body = notificationBody(f, t, over);
    const receivedAt = plusMs(t.transaction_at!, delay);
    notifications.push({ kind: 'transaction', received_at: receivedAt, payload: body });
    if (draw(seed, i, 4) < rates.duplicateDelivery) {
      notifications.push({ kind: 'transaction', received_at: plusMs(receivedAt, 30_000), payload: body });
    }
  };

  const checkFee = (t: TransactionRecord) => {
    if (t.status !== 'SUCCESSFUL' || t.fee_cents === null) return;
    const rule = SANDBOX_FEE_SCHEDULE.find(
      (s) => s.product === t.product && s.transactionType === t.transaction_type && s.currency === t.currency,
    );
    if (!rule) return;
    const fee = contractedFeeCents(t.amount_cents, rule);
    if (fee !== t.fee_cents)
      expect(`fee_mismatch:fee_vs_schedule:${t.transaction_id}`, 'fee_mismatch', fee, t.fee_cents, on(t));
  };

  const doubles: { t: TransactionRecord; f: HistoryTransaction | undefined }[] = [];
  let i = 0;
  for (const t of history.transactions({ asOf })) {
    const f = history.findByTransactionId(t.transaction_id);
    providerTransactions.push(t);
    checkFee(t);
    notify(i, f, t);
    if (f?.legacyConflict)
      expect(
        `source_conflict:${t.transaction_id}`,
        'source_conflict',
        t.amount_cents,
        t.amount_cents + 100,
        on(t),
      );

    // The ledger entry, or the way it disagrees.
    const u = draw(seed, i, 1);
    const ok = t.status === 'SUCCESSFUL';
    let c = rates.missingInLedger;
    const id = t.transaction_id;
    if (u < c) {
      if (ok) expect(`missing_in_ledger:${id}`, 'missing_in_ledger', t.amount_cents, null, on(t));
      else if (draw(seed, i, 5) < 0.5) ledger.push(ledgerEntry(t));
    } else if (u < (c += rates.amountMismatch)) {
      const amount = t.amount_cents + 1 + Math.floor(draw(seed, i, 6) * 500);
      ledger.push(ledgerEntry(t, { amount_cents: amount }));
      expect(`amount_mismatch:${id}`, 'amount_mismatch', t.amount_cents, amount, on(t));
    } else if (u < (c += rates.currencyMismatch)) {
      ledger.push(ledgerEntry(t, { currency: t.currency === 'CAD' ? 'USD' : 'CAD' }));
      expect(`currency_mismatch:${id}`, 'currency_mismatch', t.amount_cents, t.amount_cents, on(t));
    } else if (u < (c += rates.typeMismatch)) {
      ledger.push(ledgerEntry(t, { transaction_type: t.transaction_type === 'DEBIT' ? 'CREDIT' : 'DEBIT' }));
      expect(`type_mismatch:${id}`, 'type_mismatch', t.amount_cents, t.amount_cents, on(t));
    } else if (u < c + rates.statusMismatch) {
      ledger.push(ledgerEntry(t, { status: ok ? 'REJECTED' : 'SUCCESSFUL' }));
      expect(`status_mismatch:${id}`, 'status_mismatch', t.amount_cents, t.amount_cents, on(t));
    } else if (ok || draw(seed, i, 5) < 0.5) {
      // Rejected transactions are booked half the time: not booking them is not a discrepancy.
      ledger.push(ledgerEntry(t));
    }

    // A second provider transaction for the same merchant transaction id (a double submission),
    // added to the history once this walk over it is done.
    if (ok && draw(seed, i, 7) < rates.duplicateMerchantTransaction) doubles.push({ t, f });

    // Ledger-only entries: the merchant booked something the provider never saw.
    if (draw(seed, i, 8) < rates.missingAtProvider) {
      const mtid = `MV-${id}`;
      const booked = draw(seed, i, 9) < 0.8;
      ledger.push(
        ledgerEntry(t, {
          merchant_transaction_id: mtid,
          transaction_id: null,
          amount_cents: 100 + Math.floor(draw(seed, i, 10) * 100_000),
          status: booked ? 'SUCCESSFUL' : 'FAILED',
          booked_at: plusMs(t.transaction_at!, 1000),
        }),
      );
      const last = ledger[ledger.length - 1]!;
      // A FAILED entry the provider never saw is no discrepancy: the request may never have left.
      if (booked)
        expect(
          `missing_at_provider:${mtid}`,
          'missing_at_provider',
          last.amount_cents,
          null,
          easternDateOf(last.booked_at),
        );
    }
    i++;
  }

  // The double submissions: received at the same instant as the original (which keeps the ledger
  // entry: same values and time, smaller id), settled at once, notified.
  for (const { t, f } of doubles) {
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
    providerTransactions.push(dup);
    expect(
      `duplicate_merchant_transaction:${dup.transaction_id}`,
      'duplicate_merchant_transaction',
      null,
      dup.amount_cents,
      on(dup),
    );
    checkFee(dup);
    notifications.push({
      kind: 'transaction',
      received_at: plusMs(dup.transaction_at!, 5000),
      payload: notificationBody(f, dup),
    });
  }

  // Legacy-only transactions (the e-transfer product): booked like the others, with the ledger
  // disagreements the pipeline can see on a legacy row (no type: the legacy code is not documented).
  const legacyTransactions = [...history.legacyTransactions({ asOf, queryType: '5' })];
  for (const g of legacyTransactions) {
    const f = history.findByTransactionId(g.transaction_id);
    if (!f || f.channel !== 'legacy') continue;
    const id = g.transaction_id;
    const ok = g.status === 'SUCCESSFUL';
    const entry = (over: Partial<LedgerRecord> = {}): LedgerRecord => ({
      kind: 'ledger',
      merchant_transaction_id: g.merchant_transaction_id!,
      transaction_type: f.type,
      amount_cents: g.amount_cents!,
      currency: g.currency!,
      status: ok ? 'SUCCESSFUL' : 'FAILED',
      booked_at: plusMs(g.transaction_at!, 2000),
      transaction_id: id,
      original_merchant_transaction_id: null,
      merchant_user_id: g.merchant_user_id,
      product: null,
      fee_cents: null,
      description: 'e-transfer',
      ...over,
    });
    const amount = g.amount_cents!;
    const u = draw(seed, i, 1);
    let c = rates.missingInLedger;
    if (u < c) {
      if (ok) expect(`missing_in_ledger:${id}`, 'missing_in_ledger', amount, null, g.transaction_on);
    } else if (u < (c += rates.amountMismatch)) {
      const other = amount + 1 + Math.floor(draw(seed, i, 6) * 500);
      ledger.push(entry({ amount_cents: other }));
      expect(`amount_mismatch:${id}`, 'amount_mismatch', amount, other, g.transaction_on);
    } else if (u < (c += rates.currencyMismatch)) {
      ledger.push(entry({ currency: g.currency === 'CAD' ? 'USD' : 'CAD' }));
      expect(`currency_mismatch:${id}`, 'currency_mismatch', amount, amount, g.transaction_on);
    } else if (u < c + rates.statusMismatch) {
      ledger.push(entry({ status: ok ? 'REJECTED' : 'SUCCESSFUL' }));
      expect(`status_mismatch:${id}`, 'status_mismatch', amount, amount, g.transaction_on);
    } else if (ok || draw(seed, i, 5) < 0.5) {
      ledger.push(entry());
    }
    i++;
  }

  const providerReturns = [...history.returns({ asOf })];
  const legacyReturns = [...history.legacyReturns({ asOf })];
  const reportReturnIds = new Set(providerReturns.map((r) => r.return_transaction_id));
  // Returns of legacy-only transactions reach the warehouse through the legacy type 1 query.
  const legacyOnlyReturns = legacyReturns.filter((r) => !reportReturnIds.has(r.return_transaction_id));
  let j = 0;
  for (const r of [...providerReturns, ...legacyOnlyReturns]) {
    const u = draw(seed, j, 11);
    const entry: LedgerRecord = {
      kind: 'ledger',
      merchant_transaction_id: `${r.merchant_transaction_id}-R`,
      transaction_type: 'RETURN',
      amount_cents: r.amount_cents,
      currency: r.currency,
      status: 'RETURNED',
      booked_at: `${r.returned_on}T18:00:00.000Z`,
      transaction_id: r.return_transaction_id,
      original_merchant_transaction_id: r.merchant_transaction_id,
      merchant_user_id: r.merchant_user_id,
      product: 'IBT',
      fee_cents: null,
      description: `return ${r.return_code}`,
    };
    if (u < rates.returnNotBooked) {
      expect(
        `return_not_booked:${r.return_transaction_id}`,
        'return_not_booked',
        r.amount_cents,
        null,
        r.returned_on!,
      );
    } else if (u < rates.returnNotBooked + rates.returnAmountMismatch) {
      const amount = r.amount_cents - 1 - Math.floor(draw(seed, j, 12) * 50);
      ledger.push({ ...entry, amount_cents: amount });
      expect(
        `amount_mismatch:return:${r.return_transaction_id}`,
        'amount_mismatch',
        r.amount_cents,
        amount,
        r.returned_on!,
      );
    } else {
      ledger.push(entry);
    }
    j++;
  }

  const lastReturn = [...providerReturns, ...legacyOnlyReturns].reduce(
    (d, r) => (r.returned_on && r.returned_on > d ? r.returned_on : d),
    options.to,
  );
  return {
    history,
    asOf,
    range: {
      from: options.from,
      to: lastReturn > addDays(options.to, 1) ? lastReturn : addDays(options.to, 1),
    },
    providerTransactions,
    providerReturns,
    legacyTransactions,
    legacyReturns,
    ledger,
    notifications,
    feeSchedule: SANDBOX_FEE_SCHEDULE,
    expected: expected.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
  };
}
