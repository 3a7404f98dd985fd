import {
  addDays,
  daysInclusive,
  dstTransitions,
  easternMidnightMs,
  easternWallTime,
  HOUR_MICROS,
  isoMicros,
  parseIsoMicros,
} from './formats/eastern-clock.ts';
import type {
  AdjustmentRecord,
  LegacyTransactionRecord,
  ReturnRecord,
  TransactionRecord,
} from '../domain/records.ts';

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
 *   notifications say FAILED); ~10% of report-only ones PENDING for one to three days before they settle;
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
export interface HistoryOptions {
  /** Any integer or string; the same seed gives the same history. */
  readonly seed: number | string;
  /** How many transactions in total over from..to (a few hundred to millions). */
  readonly transactions: number;
  /** First Eastern day, YYYY-MM-DD. */
  readonly from: string;
  /** Last Eastern day, YYYY-MM-DD, inclusive. */
  readonly to: string;
  /** Report API merchant id (default IBTMERCH0001). */
  readonly merchantId?: string;
  /** Legacy merchant account id, 8 characters (default EXF00001). */
  readonly legacyMerchantId?: string;
  /** Currency of every transaction, as an account that settles in one currency; null (default): CAD, about 4% USD. */
  readonly currency?: string | null;
  /**
   * The tag of merchant transaction ids (`MT-<tag>-<index>`; default the seed's tag). Two histories
   * with one tag repeat merchant transaction ids, as two provider accounts of one merchant may.
   */
  readonly merchantTransactionTag?: string;
  /**
   * Reconciliation hook: fraction (0..1) of transactions that both sources show whose legacy row
   * disagrees with the report (legacy amount 100 cents higher). {@link HistoryTransaction.legacyConflict}
   * tells which ones, so ground truth can be derived. Default 0: both sources agree.
   */
  readonly legacyConflictRate?: number;
}

/** A window of a query: UTC instants, start inclusive, end exclusive; asOf fixes statuses. */
export interface HistoryQuery {
  readonly start?: string;
  readonly end?: string;
  /** Statuses and returns as known at this instant (ISO); default: to + 30 days. */
  readonly asOf?: string;
}

export type Outcome = 'SUCCESSFUL' | 'REJECTED' | 'FAILED';
export type Channel = 'report' | 'legacy' | 'both';

/** A return of a successful transaction. */
export interface HistoryReturn {
  readonly returnTransactionId: string;
  readonly returnedAt: string;
  readonly returnedAtMicros: number;
  /** Eastern date of returnedAt: report reportDate / legacy field 1. */
  readonly returnedOn: string;
  readonly returnCode: string;
  /** Representment date, YYYY-MM-DD, or null when none is planned. */
  readonly nextActionDate: string | null;
  readonly settlementCode: string;
  readonly amountCents: number;
  readonly externalReference: string;
  readonly notifyStatus: 'C' | 'S' | 'I';
}

/** An adjustment of the merchant account about a transaction (legacy query type 4). */
export interface HistoryAdjustment {
  readonly adjustedOn: string;
  /** Raw adjustment type code (sandbox invention): F fee correction, A amount correction. */
  readonly adjustmentType: 'F' | 'A';
  /** Signed cents: negative is a debit of the merchant account. */
  readonly amountCents: number;
  readonly feeCents: number;
  readonly notes: string;
}

/** Everything the sandbox knows about one transaction, independent of any query. */
export interface HistoryTransaction {
  readonly index: number;
  readonly transactionId: string;
  readonly merchantTransactionId: string;
  readonly merchantUserId: string;
  readonly productUserId: string;
  readonly type: 'DEBIT' | 'CREDIT';
  readonly amountCents: number;
  /** Fee in cents the merchant pays; 0 for rejected and failed transactions. */
  readonly feeCents: number;
  readonly currency: string;
  /** When the provider received it, UTC to the microsecond. */
  readonly at: string;
  readonly atMicros: number;
  /** Eastern business date of `at`. */
  readonly on: string;
  readonly outcome: Outcome;
  /** When it stopped being PENDING (equal to `at` for most). */
  readonly settledAt: string;
  readonly settledAtMicros: number;
  readonly errorCode: string | null;
  readonly errorMessage: string | null;
  /** Notification delivery as the report shows it: C completed, S sent, I not sent. */
  readonly notifyStatus: 'C' | 'S' | 'I';
  readonly channel: Channel;
  readonly region: string;
  readonly countryCode: string;
  readonly externalReference: string;
  readonly deviceType: 'DESKTOP' | 'MOBILE' | 'TABLET' | 'UNKNOWN';
  readonly requestType: string;
  readonly consumerEmail: string;
  readonly bankAccountMasked: string;
  readonly accountToken: string;
  readonly accountLabel: string;
  readonly accountType: 'PC' | 'PS';
  readonly bankName: string;
  readonly return: HistoryReturn | null;
  readonly adjustment: HistoryAdjustment | null;
  /** The legacy row disagrees with the report on purpose (see legacyConflictRate). */
  readonly legacyConflict: boolean;
}

/** Raw codes of the legacy CSV the provider leaves undocumented; the sandbox's choices. */
export const LEGACY_CODES = {
  transactionType: { DEBIT: 'D', CREDIT: 'C' },
  status: { SUCCESSFUL: 'S', REJECTED: 'R', FAILED: 'F' },
  returnCategory: '4',
} as const;

const RETURN_CODES = ['901', '903', '905', '907', '910', '912', '914', '915'] as const;
const REGIONS = ['ON', 'QC', 'BC', 'AB', 'MB', 'NS', 'SK', 'NB'] as const;
const DEVICES = ['DESKTOP', 'MOBILE', 'TABLET', 'UNKNOWN'] as const;
const BANKS = ['Maple Bank', 'Northern Trust Co-op', 'Prairie Credit Union', 'Harbour Bank'] as const;
const REJECT_CODES = [
  ['E101', 'Declined by risk management'],
  ['E302', 'Consumer must re-authenticate with the bank'],
  ['E205', 'Consumer bank account not eligible'],
] as const;
const FAIL_CODES = [
  ['E500', 'Internal processing error'],
  ['E110', 'Validation error: account information incomplete'],
] as const;
const LEGACY_ERROR_CODES: Record<string, string> = {
  E101: '01',
  E302: '02',
  E205: '03',
  E500: '50',
  E110: '10',
};
const DAY_MICROS = 24 * HOUR_MICROS;

function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < text.length; k++) {
    h ^= text.charCodeAt(k);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A 32-bit hash of (seed, i, salt): murmur3's finaliser over a simple combination. */
function mix(seed: number, i: number, salt: number): number {
  let h = (seed ^ Math.imul(i + 1, 0x9e3779b1) ^ Math.imul(salt + 1, 0x85ebca6b)) >>> 0;
  h ^= Math.floor(i / 0x1_0000_0000);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** A deterministic history; see {@link HistoryOptions} for what it contains. */
export interface History {
  readonly options: Required<HistoryOptions>;
  /** Number of transactions, generated ones plus those added by {@link History.add}. */
  readonly size: number;
  /** Transaction `index` (0 <= index < size). */
  fact(index: number): HistoryTransaction;
  /** The transaction with this provider id, if any (ids encode their index). */
  findByTransactionId(transactionId: string): HistoryTransaction | undefined;
  /** The transaction that has this return transaction id, if any. */
  findByReturnTransactionId(returnTransactionId: string): HistoryTransaction | undefined;
  /** Every transaction received in the window, whatever its channel. */
  facts(query?: HistoryQuery): Generator<HistoryTransaction>;
  /** Report API TRANSACTION records received in the window (channels report and both). */
  transactions(query?: HistoryQuery): Generator<TransactionRecord>;
  /** Report API RETURN records returned in the window (returns of report-visible transactions). */
  returns(query?: HistoryQuery): Generator<ReturnRecord>;
  /** Legacy query type 5 or 6 records whose Eastern date is in the window (channels legacy and both). */
  legacyTransactions(query?: HistoryQuery & { queryType?: '5' | '6' }): Generator<LegacyTransactionRecord>;
  /** Legacy query type 1 records: returns of legacy-visible transactions, returned in the window. */
  legacyReturns(query?: HistoryQuery): Generator<ReturnRecord>;
  /** Legacy query type 4 records: adjustments made in the window. */
  adjustments(query?: HistoryQuery): Generator<AdjustmentRecord>;
  /**
   * Adds a transaction received now (the sandbox's interactive endpoint). It settles at once, appears
   * in later reports and queries, and is returned with its index.
   */
  add(tx: AddedTransaction): HistoryTransaction;
}

/** What the interactive endpoint knows of a new transaction. */
export interface AddedTransaction {
  readonly type: 'DEBIT' | 'CREDIT';
  readonly amountCents: number;
  readonly currency: string;
  readonly merchantTransactionId: string;
  readonly merchantUserId: string;
  readonly region?: string;
  readonly countryCode?: string;
  /** Received at (UTC ISO); default now. */
  readonly at?: string;
}

/** Report-to-canonical status as the report API shows an outcome. */
function reportStatus(outcome: Outcome): 'SUCCESSFUL' | 'REJECTED' {
  return outcome === 'SUCCESSFUL' ? 'SUCCESSFUL' : 'REJECTED';
}

function seedOf(seed: number | string): number {
  return typeof seed === 'number' ? seed >>> 0 : hashString(seed);
}

/** Three base-36 characters of the seed, in every id of the history. */
function tagOf(seed: number | string): string {
  return (seedOf(seed) % 46656).toString(36).toUpperCase().padStart(3, '0');
}

/** Creates the history. Cheap: nothing is generated until asked. */
export function createHistory(input: HistoryOptions): History {
  if (!Number.isSafeInteger(input.transactions) || input.transactions < 0) {
    throw new RangeError(`transactions must be a non-negative integer, got ${input.transactions}`);
  }
  const dayCount = daysInclusive(input.from, input.to);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(input.from) || !/^\d{4}-\d{2}-\d{2}$/.test(input.to) || dayCount < 1) {
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
    currency: input.currency ?? null,
    merchantTransactionTag: input.merchantTransactionTag ?? tagOf(input.seed),
  };
  const seed = seedOf(input.seed);
  const tag = tagOf(input.seed);
  const n = input.transactions;
  const defaultAsOfUs = easternMidnightMs(addDays(input.to, 31)) * 1000;
  const added: HistoryTransaction[] = [];

  const dayStartUs: number[] = [];
  for (let d = 0; d <= dayCount; d++) dayStartUs.push(easternMidnightMs(addDays(input.from, d)) * 1000);
  const firstIndexOfDay = (d: number) => Math.ceil((d * n) / dayCount);
  const dayOfIndex = (i: number) => Math.floor((i * dayCount) / n);

  const idPattern = new RegExp(`^T${tag}(\\d{10})$`);
  const returnIdPattern = new RegExp(`^R${tag}(\\d{10})$`);

  function transition(d: number): { atUs: number; fall: boolean } | null {
    const start = dayStartUs[d]!;
    const end = dayStartUs[d + 1]!;
    const year = new Date(Math.floor(start / 1000)).getUTCFullYear();
    const { startMs, endMs } = dstTransitions(year);
    if (startMs * 1000 >= start && startMs * 1000 < end) return { atUs: startMs * 1000, fall: false };
    if (endMs * 1000 >= start && endMs * 1000 < end) return { atUs: endMs * 1000, fall: true };
    return null;
  }

  function generated(i: number): HistoryTransaction {
    const r = (salt: number) => mix(seed, i, salt);
    const u = (salt: number) => r(salt) / 0x1_0000_0000;
    const d = dayOfIndex(i);
    const start = dayStartUs[d]!;
    const length = dayStartUs[d + 1]! - start;
    const channelDraw = u(1);
    const channel: Channel = channelDraw < 0.75 ? 'report' : channelDraw < 0.9 ? 'legacy' : 'both';
    const micros = r(3) % 1_000_000;
    let atUs = start + Math.floor(u(2) * (length / 1_000_000)) * 1_000_000 + micros;
    const dst = transition(d);
    if (dst && r(4) % 8 === 0) {
      // Within an hour either side of the change: around the skipped hour, or inside the repeated one.
      atUs = dst.atUs - HOUR_MICROS + Math.floor(u(5) * 7200) * 1_000_000 + micros;
    }
    if (dst?.fall && channel !== 'report' && atUs >= dst.atUs && atUs < dst.atUs + HOUR_MICROS) {
      atUs -= HOUR_MICROS; // same wall time on the daylight side: the legacy CSV reads it back exactly
    }
    const type = u(6) < 0.7 ? 'DEBIT' : 'CREDIT';
    const amountDraw = r(7);
    const amountCents =
      amountDraw % 997 === 0
        ? 100
        : amountDraw % 991 === 0
          ? 100_000_000
          : 100 + Math.floor(u(8) * u(8) * 499_900);
    const currency = options.currency ?? (u(9) < 0.04 ? 'USD' : 'CAD');
    const outcomeDraw = u(10);
    // Transactions both sources show are successful: the legacy status code cannot say REJECTED apart
    // from FAILED, so a comparison would flag them all.
    const outcome: Outcome =
      channel === 'both'
        ? 'SUCCESSFUL'
        : outcomeDraw < 0.08
          ? 'REJECTED'
          : outcomeDraw < 0.11
            ? 'FAILED'
            : 'SUCCESSFUL';
    const pending = channel === 'report' && u(11) < 0.1;
    const settledAtUs = pending ? atUs + (1 + (r(12) % 3)) * DAY_MICROS + (r(13) % 3600) * 1_000_000 : atUs;
    const feeCents =
      outcome === 'SUCCESSFUL' ? (type === 'DEBIT' ? 25 : 40) + Math.floor((amountCents * 3) / 1000) : 0;
    const err =
      outcome === 'REJECTED'
        ? REJECT_CODES[r(14) % REJECT_CODES.length]!
        : outcome === 'FAILED'
          ? FAIL_CODES[r(14) % FAIL_CODES.length]!
          : null;
    const notifyDraw = u(15);
    const notifyStatus = notifyDraw < 0.9 ? 'C' : notifyDraw < 0.96 ? 'S' : 'I';
    const idDigits = String(i).padStart(10, '0');
    const last4 = String(r(16) % 10000).padStart(4, '0');

    let ret: HistoryReturn | null = null;
    if (outcome === 'SUCCESSFUL' && u(17) < (type === 'DEBIT' ? 0.04 : 0.01)) {
      const returnedAtUs = settledAtUs + (2 + (r(18) % 5)) * DAY_MICROS + (r(19) % 7200) * 1_000_000;
      const returnedOn = easternWallTime(returnedAtUs).date;
      ret = {
        returnTransactionId: `R${tag}${idDigits}`,
        returnedAt: isoMicros(returnedAtUs),
        returnedAtMicros: returnedAtUs,
        returnedOn,
        returnCode: RETURN_CODES[r(20) % RETURN_CODES.length]!,
        nextActionDate: r(21) % 2 === 0 ? addDays(returnedOn, 5) : null,
        settlementCode: `S${String(r(22) % 100000).padStart(5, '0')}`,
        amountCents,
        externalReference: `XR${tag}${idDigits}`,
        notifyStatus: r(23) % 10 === 0 ? 'S' : 'C',
      };
    }
    let adjustment: HistoryAdjustment | null = null;
    if (u(24) < 0.02) {
      const fee = r(25) % 2 === 0;
      adjustment = {
        adjustedOn: addDays(easternWallTime(atUs).date, 1 + (r(26) % 3)),
        adjustmentType: fee ? 'F' : 'A',
        amountCents: fee ? 0 : -(1 + (r(27) % Math.max(1, Math.floor(amountCents / 10)))),
        feeCents: fee ? -(1 + (r(28) % 25)) : 0,
        notes: fee
          ? `Fee correction for transaction T${tag}${idDigits}`
          : `Amount correction ticket ${r(29) % 100000}`,
      };
    }
    return {
      index: i,
      transactionId: `T${tag}${idDigits}`,
      merchantTransactionId: `MT-${options.merchantTransactionTag}-${idDigits}`,
      merchantUserId: `U${String(r(30) % 100_000_000).padStart(8, '0')}`,
      productUserId: `PU${String(r(30) % 100_000_000).padStart(8, '0')}`,
      type,
      amountCents,
      feeCents,
      currency,
      at: isoMicros(atUs),
      atMicros: atUs,
      on: easternWallTime(atUs).date,
      outcome,
      settledAt: isoMicros(settledAtUs),
      settledAtMicros: settledAtUs,
      errorCode: err ? err[0] : null,
      errorMessage: err ? err[1] : null,
      notifyStatus,
      channel,
      region: REGIONS[r(31) % REGIONS.length]!,
      countryCode: 'CA',
      externalReference: `X${tag}${idDigits}`,
      deviceType: DEVICES[r(32) % DEVICES.length]!,
      requestType: type === 'DEBIT' ? 'PAYIN' : 'PAYOUT',
      consumerEmail: `consumer${r(30) % 100_000_000}@example.com`,
      bankAccountMasked: `XXX-XXXXX-XXXXXXX${last4}`,
      accountToken: `AT${r(33).toString(16).padStart(8, '0')}${r(34).toString(16).padStart(8, '0')}`,
      accountLabel: `****${last4}`,
      accountType: r(35) % 3 === 0 ? 'PS' : 'PC',
      bankName: BANKS[r(36) % BANKS.length]!,
      return: ret,
      adjustment,
      legacyConflict: channel === 'both' && u(37) < options.legacyConflictRate,
    };
  }

  function fact(index: number): HistoryTransaction {
    if (index >= 0 && index < n) return generated(index);
    const extra = added[index - n];
    if (!extra) throw new RangeError(`no transaction ${index}: the history has ${n + added.length}`);
    return extra;
  }

  /** Indices of the generated transactions received on Eastern days overlapping [startUs, endUs). */
  function* indicesBetween(startUs: number, endUs: number): Generator<number> {
    if (n === 0) return;
    let d0 = 0;
    while (d0 < dayCount && dayStartUs[d0 + 1]! <= startUs) d0++;
    let d1 = dayCount;
    while (d1 > d0 && dayStartUs[d1 - 1]! >= endUs) d1--;
    const last = Math.min(n, firstIndexOfDay(d1));
    for (let i = firstIndexOfDay(d0); i < last; i++) yield i;
  }

  function bounds(q: HistoryQuery = {}) {
    return {
      startUs: q.start ? parseIsoMicros(q.start) : Number.MIN_SAFE_INTEGER,
      endUs: q.end ? parseIsoMicros(q.end) : Number.MAX_SAFE_INTEGER,
      asOfUs: q.asOf ? parseIsoMicros(q.asOf) : defaultAsOfUs,
    };
  }

  function* factsReceived(startUs: number, endUs: number, asOfUs: number): Generator<HistoryTransaction> {
    for (const i of indicesBetween(startUs, endUs)) {
      const f = generated(i);
      if (f.atMicros >= startUs && f.atMicros < endUs && f.atMicros <= asOfUs) yield f;
    }
    // Added transactions happened for real (now): asOf, which dates the synthetic history, ignores them.
    for (const f of added) if (f.atMicros >= startUs && f.atMicros < endUs) yield f;
  }

  /** Transactions with a return in [startUs, endUs): received at most 7 days before the window. */
  function* factsReturned(startUs: number, endUs: number, asOfUs: number): Generator<HistoryTransaction> {
    const from = startUs === Number.MIN_SAFE_INTEGER ? startUs : startUs - 10 * DAY_MICROS;
    for (const f of factsReceived(from, endUs, asOfUs)) {
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

  function toTransactionRecord(f: HistoryTransaction, asOfUs: number): TransactionRecord {
    const status = asOfUs < f.settledAtMicros ? 'PENDING' : reportStatus(f.outcome);
    return {
      kind: 'transaction',
      transaction_id: f.transactionId,
      merchant_id: options.merchantId,
      merchant_transaction_id: f.merchantTransactionId,
      merchant_user_id: f.merchantUserId,
      product_user_id: f.productUserId,
      product: 'IBT',
      transaction_type: f.type,
      raw_transaction_type: f.type,
      status,
      raw_status: status,
      amount_cents: f.amountCents,
      fee_cents: status === 'PENDING' ? 0 : f.feeCents,
      currency: f.currency,
      transaction_at: f.at,
      transaction_on: f.on,
      local_time_flag: null,
      error_code: status === 'PENDING' ? null : f.errorCode,
      error_message: status === 'PENDING' ? null : f.errorMessage,
      notify_status: status === 'PENDING' ? 'I' : f.notifyStatus,
      region: f.region,
      country_code: f.countryCode,
      payment_method: 'EFT',
      external_reference: f.externalReference,
      device_type: f.deviceType,
      request_type: f.requestType,
      raw: '',
    };
  }

  function toReturnRecord(f: HistoryTransaction, legacy: boolean): ReturnRecord {
    const ret = f.return!;
    const common = {
      kind: 'return' as const,
      return_transaction_id: ret.returnTransactionId,
      original_transaction_id: f.transactionId,
      merchant_transaction_id: f.merchantTransactionId,
      merchant_user_id: f.merchantUserId,
      return_code: ret.returnCode,
      amount_cents: ret.amountCents,
      currency: f.currency,
      returned_on: ret.returnedOn,
      country_code: f.countryCode,
      raw: '',
    };
    if (legacy) {
      return {
        ...common,
        merchant_id: null,
        product_user_id: null,
        product: null,
        next_action_date: null,
        raw_next_action_date: null,
        settlement_code: null,
        raw_transaction_type: LEGACY_CODES.returnCategory,
        original_transaction_type: null,
        original_transaction_at: null,
        original_external_reference: null,
        external_reference: null,
        notify_status: null,
        region: null,
        legacy_field_8: null,
        legacy_field_9: null,
      };
    }
    return {
      ...common,
      merchant_id: options.merchantId,
      product_user_id: f.productUserId,
      product: 'IBT',
      next_action_date: ret.nextActionDate,
      raw_next_action_date: ret.nextActionDate,
      settlement_code: ret.settlementCode,
      raw_transaction_type: 'RETURN',
      original_transaction_type: f.type,
      original_transaction_at: f.at,
      original_external_reference: f.externalReference,
      external_reference: ret.externalReference,
      notify_status: ret.notifyStatus,
      region: f.region,
      legacy_field_8: null,
      legacy_field_9: null,
    };
  }

  function toLegacyRecord(
    f: HistoryTransaction,
    queryType: '5' | '6',
    asOfUs: number,
  ): LegacyTransactionRecord {
    const wall = easternWallTime(f.atMicros);
    const secondUs = Math.floor(f.atMicros / 1_000_000) * 1_000_000;
    const returned = f.return && f.return.returnedAtMicros <= asOfUs ? f.return : null;
    return {
      kind: 'legacy-transaction',
      transaction_id: f.transactionId,
      transaction_on: wall.date,
      raw_transaction_type: LEGACY_CODES.transactionType[f.type],
      merchant_transaction_id: f.merchantTransactionId,
      amount_cents: f.amountCents + (f.legacyConflict ? 100 : 0),
      currency: f.currency,
      status: f.outcome === 'SUCCESSFUL' ? 'SUCCESSFUL' : 'FAILED',
      raw_status: LEGACY_CODES.status[f.outcome],
      internal_user_id: f.productUserId,
      fee_cents: f.feeCents,
      merchant_account_id: options.legacyMerchantId,
      error_code: f.errorCode ? (LEGACY_ERROR_CODES[f.errorCode] ?? null) : null,
      raw_notify_status: f.notifyStatus,
      merchant_user_id: f.merchantUserId,
      raw_transaction_time: wall.time,
      transaction_at: isoMicros(secondUs),
      local_time_flag: wall.fold ? 'dst_fold' : null,
      country_code: f.countryCode,
      consumer_email: f.consumerEmail,
      bank_account_masked: f.bankAccountMasked,
      // Field 18 is the return code of an EFT-routed payout: payins' returns are not shown there.
      return_code: returned && f.type === 'CREDIT' ? returned.returnCode : null,
      returned_on: queryType === '6' && returned && f.type === 'CREDIT' ? returned.returnedOn : null,
      completed_on: f.outcome === 'SUCCESSFUL' ? easternWallTime(f.settledAtMicros).date : null,
      payment_type: f.type === 'DEBIT' ? 'ETRANSFER' : null,
      network_reference: f.type === 'DEBIT' ? `CA${f.accountToken.slice(2, 14).toUpperCase()}` : null,
      query_type: queryType,
      raw: '',
    };
  }

  function toAdjustmentRecord(f: HistoryTransaction): AdjustmentRecord {
    const a = f.adjustment!;
    return {
      kind: 'adjustment',
      // The warehouse key is the parser's hash of the fields plus the loader's occurrence number; the
      // generator's key only names the transaction and is not meant to be compared.
      adjustment_key: `sandbox:${f.transactionId}`,
      transaction_id: f.transactionId,
      raw_transaction_type: LEGACY_CODES.transactionType[f.type],
      adjustment_type: a.adjustmentType,
      amount_cents: a.amountCents,
      fee_cents: a.feeCents,
      currency: f.currency,
      adjusted_on: a.adjustedOn,
      merchant_account_id: options.legacyMerchantId,
      notes: a.notes,
      raw: '',
    };
  }

  const history: History = {
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
      const { startUs, endUs, asOfUs } = bounds(q);
      yield* factsReceived(startUs, endUs, asOfUs);
    },
    *transactions(q) {
      const { startUs, endUs, asOfUs } = bounds(q);
      for (const f of factsReceived(startUs, endUs, asOfUs)) {
        if (f.channel !== 'legacy') yield toTransactionRecord(f, asOfUs);
      }
    },
    *returns(q) {
      const { startUs, endUs, asOfUs } = bounds(q);
      for (const f of factsReturned(startUs, endUs, asOfUs)) {
        if (f.channel !== 'legacy') yield toReturnRecord(f, false);
      }
    },
    *legacyTransactions(q) {
      const { startUs, endUs, asOfUs } = bounds(q);
      for (const f of factsReceived(startUs, endUs, asOfUs)) {
        if (f.channel !== 'report') yield toLegacyRecord(f, q?.queryType ?? '5', asOfUs);
      }
    },
    *legacyReturns(q) {
      const { startUs, endUs, asOfUs } = bounds(q);
      for (const f of factsReturned(startUs, endUs, asOfUs)) {
        if (f.channel !== 'report') yield toReturnRecord(f, true);
      }
    },
    *adjustments(q) {
      const { startUs, endUs, asOfUs } = bounds(q);
      const from = startUs === Number.MIN_SAFE_INTEGER ? startUs : startUs - 4 * DAY_MICROS;
      for (const f of factsReceived(from, endUs, asOfUs)) {
        if (!f.adjustment) continue;
        const atUs = easternMidnightMs(f.adjustment.adjustedOn) * 1000;
        if (atUs >= startUs && atUs < endUs && atUs <= asOfUs) yield toAdjustmentRecord(f);
      }
    },
    add(tx) {
      const index = n + added.length;
      const atUs = tx.at ? parseIsoMicros(tx.at) : Date.now() * 1000;
      const idDigits = String(index).padStart(10, '0');
      const ok = tx.amountCents >= 100 && tx.amountCents <= 100_000_000;
      const f: HistoryTransaction = {
        index,
        transactionId: `T${tag}${idDigits}`,
        merchantTransactionId: tx.merchantTransactionId,
        merchantUserId: tx.merchantUserId,
        productUserId: `PU${idDigits.slice(2)}`,
        type: tx.type,
        amountCents: tx.amountCents,
        feeCents: ok ? (tx.type === 'DEBIT' ? 25 : 40) + Math.floor((tx.amountCents * 3) / 1000) : 0,
        currency: tx.currency,
        at: isoMicros(atUs),
        atMicros: atUs,
        on: easternWallTime(atUs).date,
        outcome: ok ? 'SUCCESSFUL' : 'REJECTED',
        settledAt: isoMicros(atUs),
        settledAtMicros: atUs,
        errorCode: ok ? null : 'E120',
        errorMessage: ok ? null : 'transactionAmount outside 100..100000000',
        notifyStatus: 'S',
        channel: 'report',
        region: tx.region ?? 'ON',
        countryCode: tx.countryCode ?? 'CA',
        externalReference: `X${tag}${idDigits}`,
        deviceType: 'DESKTOP',
        requestType: tx.type === 'DEBIT' ? 'PAYIN' : 'PAYOUT',
        consumerEmail: 'interactive@example.com',
        bankAccountMasked: 'XXX-XXXXX-XXXXXXX0000',
        accountToken: `AT${idDigits}`,
        accountLabel: '****0000',
        accountType: 'PC',
        bankName: BANKS[0],
        return: null,
        adjustment: null,
        legacyConflict: false,
      };
      added.push(f);
      return f;
    },
  };
  return history;
}

/** The default asOf of a history: the end of its last day plus 30 days, when all has settled. */
export function defaultAsOf(options: Pick<HistoryOptions, 'to'>): string {
  return new Date(easternMidnightMs(addDays(options.to, 31))).toISOString();
}
