import type { Environment } from '../../config/config.ts';
import type { LoadSource, ReportFormat, Source } from '../../domain/records.ts';

export interface LoadProgress {
  rowsRead: number;
  bytes: number;
}

/** What to load and where it came from (recorded on the `loads` row for lineage). */
export interface LoadRequest {
  /**
   * Provider account the data belongs to (a name of the accounts configuration, `[a-z0-9-]{1,32}`);
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
  /** Called about once a second while reading, and once at the end of reading. */
  onProgress?: (p: LoadProgress) => void;
  signal?: AbortSignal;
}

export interface LedgerLoadRequest {
  fileName: string;
  origin: 'file' | 'pull' | 'workflow';
  environment: Environment;
  workflowId?: string;
  /** More rejected rows than this fails the load whole (TooManyRejected); unset: no limit. */
  maxRejected?: number;
  onProgress?: (p: LoadProgress) => void;
  signal?: AbortSignal;
}

export interface LoadSummary {
  loadId: number;
  source: LoadSource;
  status: 'committed' | 'failed';
  rowsRead: number;
  rowsLoaded: number;
  rowsRejected: number;
  rowsInserted: number;
  rowsUpdated: number;
  rowsUnchanged: number;
  fileSha256: string;
  bytes: number;
  zipped: boolean;
  durationMs: number;
}
