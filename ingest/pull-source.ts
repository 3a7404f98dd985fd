import { checkDateWindow, InvalidDateWindow } from '../domain/time/date-window.ts';
import { pipeline, type Readable } from 'node:stream';
import type { DatabaseHandle } from '../db/connect.ts';
import type { Config } from '../config/config.ts';
import { NotAReport, TooManyRejected, UnreadableInput, UsageError } from '../domain/errors.ts';
import { quotedStart } from '../domain/redact-secrets.ts';
import { AnswerHead } from './answer-head.ts';
import type { LoadSummary } from '../domain/load-summary.ts';
import { loadReport, type LoadRequest } from './load/load-report.ts';
import type { Source } from '../domain/records.ts';
import { MAX_WINDOW_DAYS, SOURCE_TABLE } from '../domain/sources.ts';
import { addDays, daysInclusive } from '../domain/time/calendar.ts';
import { easternDayStartUtc } from '../domain/time/eastern.ts';
import {
  ProviderAnswerNotData,
  ProviderStreamBroken,
  type ProviderClient,
  type ProviderResponseStream,
} from '../provider/client/index.ts';
import { DEFAULT_ACCOUNT } from '../domain/account-name.ts';

/** A pull request that cannot be served as asked (bad dates, window too long): a usage error, not retryable. */
/** A pull's window that is not one, or longer than a pull covers (domain/time/date-window.ts). */
export const InvalidPullWindow = InvalidDateWindow;
export type InvalidPullWindow = InvalidDateWindow;

export interface PullSourceRequest {
  source: Source;
  /** First Eastern day, YYYY-MM-DD. */
  from: string;
  /** Last Eastern day, YYYY-MM-DD, inclusive; at most 40 days after from, counting both. */
  to: string;
  origin: 'pull' | 'workflow';
  /** The provider account pulled for (the client passed in must be that account's); default `default`. */
  account?: string;
  workflowId?: string;
  /** More rejected rows than this fails the load whole (TooManyRejected); unset: no limit. */
  maxRejected?: number;
  /** The option or variable that set maxRejected, named in the error (default `--max-rejected`). */
  maxRejectedSetting?: string;
  onProgress?: (p: { rowsRead: number; bytes: number }) => void;
  signal?: AbortSignal;
  /** Report API output (default JSON, not zipped). The loader recognises a ZIP by its content. */
  output?: { type?: 'JSON' | 'CSV'; zip?: boolean };
}

/**
 * Legacy type 5 is pulled with every field it allows (19 is type 6 only), so that the warehouse keeps
 * the completion date, payment type and network reference, which the default set omits.
 */
export const LEGACY_TRANSACTION_FIELDS: readonly number[] = [
  1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 20, 21, 22,
];

/** Checks from..to and returns the UTC window [start of from, start of the day after to) in Eastern time. */
export function pullWindow(from: string, to: string): { start: string; end: string; days: number } {
  checkDateWindow(from, to, (problem) =>
    problem === 'reversed'
      ? `--to ${to} is before --from ${from}`
      : `--${problem.end} ${JSON.stringify(problem.value)} is not a date YYYY-MM-DD`,
  );
  const days = daysInclusive(from, to);
  if (days > MAX_WINDOW_DAYS) {
    throw new InvalidPullWindow(
      `${from}..${to} spans ${days} days; a pull covers at most ${MAX_WINDOW_DAYS} (use recon backfill for longer ranges)`,
    );
  }
  return { start: easternDayStartUtc(from), end: easternDayStartUtc(addDays(to, 1)), days };
}

/**
 * Fetches one source for one window of Eastern days (from..to inclusive, at most 40) and streams it
 * into the warehouse: HTTP body → parser → loader, never buffered whole.
 *
 * Idempotent (the loader is): pulling the same window again leaves the warehouse as it was. Whole or
 * nothing: a failure keeps no row of this load. A body cut mid-way, or a zipped body that arrives
 * unreadable, is thrown as {@link ProviderStreamBroken} (retryable), whatever the parser made of it;
 * other errors are those of the client (provider/client/errors.ts) and the loader.
 */
export async function pullSource(
  deps: { handle: DatabaseHandle; client: ProviderClient; config: Config },
  req: PullSourceRequest,
): Promise<LoadSummary> {
  const window = pullWindow(req.from, req.to);
  const spec = SOURCE_TABLE[req.source] as (typeof SOURCE_TABLE)[Source] | undefined;
  let response: ProviderResponseStream;
  let load: Omit<LoadRequest, 'fileName'>;
  const common = {
    source: req.source,
    origin: req.origin,
    account: req.account ?? DEFAULT_ACCOUNT,
    environment: deps.config.environment,
    window: { start: window.start, end: window.end },
    workflowId: req.workflowId,
    maxRejected: req.maxRejected,
    maxRejectedSetting: req.maxRejectedSetting,
    onProgress: req.onProgress,
    signal: req.signal,
  };
  if (spec?.api === 'report') {
    const type = req.output?.type ?? 'JSON';
    response = await deps.client.report({
      queryType: spec.queryType,
      start: window.start,
      end: window.end,
      outputType: type,
      zip: req.output?.zip ?? false,
      signal: req.signal,
    });
    load = { ...common, format: type === 'JSON' ? 'report-json' : 'report-csv', queryType: spec.queryType };
  } else if (spec?.api === 'legacy') {
    const fields = spec.kind === 'legacy-transaction' ? [...LEGACY_TRANSACTION_FIELDS] : undefined;
    response = await deps.client.legacyQuery({
      queryType: spec.queryType,
      from: req.from,
      to: req.to,
      fields,
      signal: req.signal,
    });
    load = { ...common, format: 'legacy', queryType: spec.queryType, fields };
  } else {
    throw new UsageError(`unknown source ${JSON.stringify(req.source)}`);
  }
  let transportError: ProviderStreamBroken | null = null;
  const stream: Readable = response.stream;
  stream.on('error', (error) => {
    if (error instanceof ProviderStreamBroken) transportError = error;
  });
  const head = new AnswerHead();
  const tapped = pipeline(stream, head, () => {});
  try {
    return await loadReport(deps.handle, { ...load, fileName: response.description }, tapped);
  } catch (error) {
    if (transportError) throw transportError;
    if (response.zipped && error instanceof UnreadableInput) {
      throw new ProviderStreamBroken(
        `${response.description}: the ZIP sent by the provider is unreadable (${error.message}); fetch it again`,
        { bytesReceived: 0 },
      );
    }
    if (error instanceof UnreadableInput) throw notData(req, error, head, deps.config);
    if (error instanceof TooManyRejected) {
      // Named by source and window, as a person finds them in the workflow and on the coverage page.
      throw new TooManyRejected(
        `${req.source} ${req.from}..${req.to}`,
        error.rejected,
        error.limit,
        req.maxRejectedSetting,
      );
    }
    throw error;
  } finally {
    if (!tapped.destroyed) tapped.destroy();
    if (!stream.destroyed) stream.destroy();
  }
}

/**
 * A complete answer that the parser could not read as the report asked for (no line a record, no
 * JSON array, no CSV header): one line naming the source, the window and the answer's start, with
 * the account's own credentials and any other secret redacted from it.
 */
function notData(
  req: PullSourceRequest,
  error: UnreadableInput,
  head: AnswerHead,
  config: Config,
): ProviderAnswerNotData {
  const p = config.provider;
  const why =
    error instanceof NotAReport
      ? `${error.lines} line${error.lines === 1 ? '' : 's'}, none of them a record; line ${error.first.line}: ${error.first.reason}`
      : `${error.line === null ? '' : `line ${error.line}: `}${error.reason}`;
  const start = quotedStart(head.text(), [p.legacyMerchantPass, p.clientSecret]);
  return new ProviderAnswerNotData(`${req.source} ${req.from}..${req.to}`, why, start);
}
