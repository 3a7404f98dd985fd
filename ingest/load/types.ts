import type { Environment } from '../../config/config.ts';
import type { ReportFormat, Source } from '../../domain/records.ts';

export interface LoadProgress {
  rowsRead: number;
  bytes: number;
}

/** What to load and where it came from (recorded on the `loads` row for lineage). */
export interface LoadRequest {
  /**
   * Provider account the data belongs to (an AccountName: domain/account-name.ts);
   * 'default' when not given. A load of one account never changes another account's rows.
   */
  account?: string;
  source: Source;
  format: ReportFormat;
  /** Legacy query type (1, 4, 5, 6) or report query type (TRANSACTION, RETURN). */
  queryType?: string;
  /** Legacy response_fields: the field numbers of the columns, in file order. */
  fields?: number[];
  fileName: string;
  origin: 'file' | 'pull' | 'workflow';
  environment: Environment;
  /** Reporting window the data covers (UTC, end exclusive), when known. */
  window?: { start: string; end: string };
  workflowId?: string;
  /** More rejected rows than this fails the load whole (TooManyRejected); unset: no limit. */
  maxRejected?: number;
  /** The option or variable that set maxRejected, named in the error (default `--max-rejected`). */
  maxRejectedSetting?: string | undefined;
  /** Called about once a second while reading, and once at the end of reading. */
  onProgress?: (p: LoadProgress) => void;
  signal?: AbortSignal;
  /** Rows per merged batch (the loader's default unless set; tests set it small). */
  batchRows?: number;
}

export interface LedgerLoadRequest {
  /**
   * Account of the entries that say nothing of theirs (no `account` column, no `merchant_id` the
   * configuration maps); 'default' when not given. Also the account of the `loads` row.
   */
  account?: string;
  /**
   * Maps a ledger entry's `merchant_id` to an account name (Account.legacyMerchantId of the accounts
   * configuration); undefined when no account has that merchant id.
   */
  accountOfMerchant?: (merchantId: string) => string | undefined;
  /** Names an entry's `account` column may take; unset: any well-formed name. */
  knownAccounts?: ReadonlySet<string>;
  fileName: string;
  origin: 'file' | 'pull' | 'workflow';
  environment: Environment;
  workflowId?: string;
  /** More rejected rows than this fails the load whole (TooManyRejected); unset: no limit. */
  maxRejected?: number;
  onProgress?: (p: LoadProgress) => void;
  signal?: AbortSignal;
}
