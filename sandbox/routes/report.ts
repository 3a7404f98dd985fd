import type { ReturnRecord, TransactionRecord } from '../../domain/records.ts';
import { reportCsvChunks } from '../formats/report-csv.ts';
import { reportJsonChunks } from '../formats/report-json.ts';
import { zipSingleEntry } from '../formats/zip-writer.ts';
import { easternDateOf } from '../../domain/time/eastern.ts';
import { delayWindow } from '../server/faults.ts';
import { invalid } from '../server/http.ts';
import type { Route } from '../server/state.ts';
import { streamBody } from '../server/stream-body.ts';
import { authorisedJson } from './auth.ts';

/** POST /api/report/v4/report: TRANSACTION or RETURN records of a window, as JSON or CSV, zipped or not. */
export const report: Route = async (state, req, res) => {
  const body = await authorisedJson(state, req);
  const products = Array.isArray(body.productList) ? body.productList : [body.productList];
  if (products.length !== 1 || products[0] !== 'IBT') {
    throw invalid('V010', 'productList must be ["IBT"]');
  }
  const rep = body.report as Record<string, unknown> | undefined;
  if (!rep || typeof rep !== 'object') throw invalid('V011', 'report is required');
  if (rep.queryType === undefined || rep.queryType === null || rep.queryType === '') {
    throw invalid('V026', 'The report query type was not specified');
  }
  if (rep.queryType !== 'TRANSACTION' && rep.queryType !== 'RETURN') {
    throw invalid('V027', `queryType ${JSON.stringify(rep.queryType)} is not TRANSACTION or RETURN`);
  }
  const isoMs = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
  for (const key of ['startDateTime', 'endDateTime'] as const) {
    if (typeof rep[key] !== 'string' || !isoMs.test(rep[key]) || Number.isNaN(Date.parse(rep[key]))) {
      throw invalid(
        'V030',
        `${key} must be UTC ISO 8601 with milliseconds and Z, e.g. 2026-11-01T04:00:00.000Z`,
      );
    }
  }
  const start = rep.startDateTime as string;
  const end = rep.endDateTime as string;
  if (Date.parse(end) <= Date.parse(start)) throw invalid('V031', 'endDateTime must be after startDateTime');
  if (rep.outputType !== 'JSON' && rep.outputType !== 'CSV') {
    throw invalid('V032', 'outputType must be JSON or CSV');
  }
  const zip = rep.outputZipFile === true || rep.outputZipFile === 'true';
  if (
    rep.outputZipFile !== undefined &&
    !zip &&
    rep.outputZipFile !== false &&
    rep.outputZipFile !== 'false'
  ) {
    throw invalid('V033', 'outputZipFile must be true or false');
  }
  await delayWindow(state, easternDateOf(start));
  const wanted = reportFilter(state.merchantId, body);
  const query = { start, end, asOf: state.asOf };
  const records = (function* () {
    const source =
      rep.queryType === 'TRANSACTION' ? state.history.transactions(query) : state.history.returns(query);
    for (const r of source) if (wanted(r)) yield r;
  })();
  const text =
    rep.outputType === 'JSON' ? reportJsonChunks(records) : reportCsvChunks(rep.queryType, records);
  const entry = `${String(rep.queryType).toLowerCase()}-report.${rep.outputType === 'JSON' ? 'json' : 'csv'}`;
  await streamBody(
    state,
    res,
    zip ? 'application/zip' : rep.outputType === 'JSON' ? 'application/json' : 'text/csv; charset=utf-8',
    zip ? zipSingleEntry(entry, text) : text,
    zip,
  );
};

/** The request's merchant and transaction filters as a predicate over records. */
function reportFilter(
  merchantId: string,
  body: Record<string, unknown>,
): (r: TransactionRecord | ReturnRecord) => boolean {
  const merchant = (body.merchant ?? {}) as Record<string, unknown>;
  const txn = (body.transaction ?? {}) as Record<string, unknown>;
  const merchantList = Array.isArray(merchant.merchantList) ? merchant.merchantList : null;
  const mtids = Array.isArray(merchant.merchantTransactionList)
    ? new Set(merchant.merchantTransactionList)
    : null;
  return (r) => {
    if (merchantList && !merchantList.includes(merchantId)) return false;
    if (mtids && !mtids.has(r.merchant_transaction_id)) return false;
    if (r.kind === 'transaction') {
      if (txn.transactionId !== undefined && r.transaction_id !== txn.transactionId) return false;
      if (txn.transactionType !== undefined && r.raw_transaction_type !== txn.transactionType) return false;
      if (txn.transactionStatus !== undefined && r.raw_status !== txn.transactionStatus) return false;
      if (txn.currencyCode !== undefined && r.currency !== txn.currencyCode) return false;
    } else if (txn.transactionId !== undefined && r.return_transaction_id !== txn.transactionId) {
      return false;
    }
    return true;
  };
}
