import type {
  AdjustmentRecord,
  LegacyTransactionRecord,
  ReturnRecord,
  TransactionRecord,
} from '../../domain/records.ts';

/** The shapes of the sandbox history (see sandbox/history.ts for what it contains). */

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
  /**
   * Reconciliation hook: fraction (0..1) of successful transactions charged a fee one cent above the
   * usual (a rounding difference); the report, the legacy row and the notification all carry it.
   * Default 0.
   */
  readonly feeOneCentOffRate?: number;
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
  /**
   * RETURNED_WITH_REPRESENTMENT (about a quarter of the returns with a next action date): the
   * provider says it will debit the payment again on nextActionDate. The sandbox never does: each is
   * a missed representment (its return notification says so).
   */
  readonly representment: boolean;
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
