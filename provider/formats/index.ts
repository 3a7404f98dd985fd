import type { Readable } from 'node:stream';
import type { LedgerRecord, OnColumns, ParsedRow, ReportFormat, ReportRecord } from '../../domain/records.ts';
import { InvalidParseOption } from './invalid-parse-option.ts';
import { detectLedgerFormat, parseLedgerStream } from './ledger.ts';
import { legacySelection, parseLegacy } from './legacy.ts';
import { parseReportCsv } from './report-csv.ts';
import { parseReportJson } from './report-json.ts';
import { requireRecords } from './require-records.ts';
import { DEFAULT_ZIP_LIMITS, looksLikeZip, peek, unzipReport, type ZipLimits } from './zip.ts';

export { InvalidParseOption } from './invalid-parse-option.ts';
export { looksLikeZip } from './zip.ts';

export interface ParseReportOptions {
  readonly format: ReportFormat;
  /** Legacy: '1', '4', '5', '6'. report-csv: 'TRANSACTION' or 'RETURN'. report-json: ignored. */
  readonly queryType?: string | undefined;
  /** Legacy types 5 and 6: the response_fields selection, columns in the order listed. */
  readonly fields?: readonly number[] | undefined;
  /** Named in every error and rejected-row message. */
  readonly fileName: string;
  /** Archive-bomb limits for zipped input; the defaults suit reports of millions of rows. */
  readonly zipLimits?: ZipLimits | undefined;
  /**
   * Told, per kind of record, the warehouse columns the input carries (the format's fields, the CSV
   * header, the legacy field list): the loader keeps the stored value of every other column.
   */
  readonly onColumns?: OnColumns | undefined;
}

/**
 * Parses one provider report (legacy CSV, JSON report or CSV report), zipped or not: a ZIP is
 * recognised by its content, never by its name. Streams: memory stays bounded by one record whatever
 * the input size. Pure apart from the stream handed in (and the temporary file a ZIP is spooled to).
 *
 * Rows that do not validate are yielded as `{ ok: false, line, raw, reason }`, never thrown; line
 * numbers are 1-based and point at the line where the record starts (a header is line 1). An input
 * that holds rows of which none is a record is no report at all: NotAReport after its last row.
 *
 * @throws InvalidParseOption at call time, before reading, for an unknown format, query type or a bad
 *   legacy `fields` selection.
 * @throws UnreadableInput while iterating, naming the file and line, when the input as a whole cannot
 *   be read (truncated or damaged ZIP, JSON broken half-way, a CSV report without its header or a
 *   required column); its subclass NotAReport when no row of a non-empty input is a record.
 */
export function parseReport(
  input: Readable | AsyncIterable<Buffer | string>,
  o: ParseReportOptions,
): AsyncIterable<ParsedRow<ReportRecord>> {
  switch (o.format) {
    case 'legacy':
      legacySelection(o.queryType, o.fields);
      break;
    case 'report-csv':
      if (o.queryType !== 'TRANSACTION' && o.queryType !== 'RETURN') {
        throw new InvalidParseOption(
          `report-csv needs --query-type TRANSACTION or RETURN (got '${o.queryType ?? ''}')`,
        );
      }
      break;
    case 'report-json':
      break;
    default:
      throw new InvalidParseOption(
        `unknown format '${String(o.format)}'; use legacy, report-json or report-csv`,
      );
  }
  return requireRecords(parseContent(input, o), o.fileName);
}

async function* parseContent(
  input: Readable | AsyncIterable<Buffer | string>,
  o: ParseReportOptions,
): AsyncGenerator<ParsedRow<ReportRecord>> {
  const content = await unzipped(input, o.fileName, o.zipLimits ?? DEFAULT_ZIP_LIMITS);
  switch (o.format) {
    case 'legacy':
      yield* parseLegacy(content, {
        queryType: o.queryType,
        fields: o.fields,
        fileName: o.fileName,
        onColumns: o.onColumns,
      });
      break;
    case 'report-csv':
      yield* parseReportCsv(content, {
        queryType: o.queryType,
        fileName: o.fileName,
        onColumns: o.onColumns,
      });
      break;
    case 'report-json':
      yield* parseReportJson(content, o.fileName, o.onColumns);
      break;
  }
}

/**
 * Parses a merchant ledger file: CSV with a header of merchant_ledger column names, or NDJSON with the
 * same names, detected by the first non-blank byte (see provider/formats/ledger.ts for the validations).
 * Rows that fail validation are yielded as rejected rows; a CSV without a required column throws
 * UnreadableInput while iterating.
 */
export function parseLedger(
  input: Readable | AsyncIterable<Buffer | string>,
  o: {
    fileName: string;
    /** Told the columns the file carries: the required ones and the optional ones it has. */
    onColumns?: OnColumns | undefined;
  },
): AsyncIterable<ParsedRow<LedgerRecord>> {
  return (async function* () {
    const { head, stream } = await peek(input, 64);
    yield* parseLedgerStream(stream, detectLedgerFormat(head), o.fileName, o.onColumns);
  })();
}

/** The format a ledger file will be read as, from its first bytes (for the loader's `loads.format`). */
export { detectLedgerFormat } from './ledger.ts';

async function unzipped(
  input: AsyncIterable<Buffer | string>,
  fileName: string,
  limits: ZipLimits,
): Promise<AsyncIterable<Buffer>> {
  const { head, stream } = await peek(input, 4);
  return looksLikeZip(head) ? unzipReport(stream, fileName, limits) : stream;
}
