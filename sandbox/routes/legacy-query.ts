import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_WINDOW_DAYS } from '../../domain/sources.ts';
import { addDays, daysInclusive } from '../../domain/time/calendar.ts';
import { easternDayStartMs as easternMidnightMs } from '../../domain/time/eastern.ts';
import {
  LEGACY_DEFAULT_FIELDS,
  legacyAdjustmentLine,
  legacyReturnLine,
  legacyTransactionLine,
  linesInChunks,
} from '../formats/legacy-csv.ts';
import { count, delayWindow, LEGACY_ERROR_PAGES } from '../server/faults.ts';
import { HttpFailure, readBody } from '../server/http.ts';
import type { SandboxState } from '../server/state.ts';
import { streamBody } from '../server/stream-body.ts';

const LEGACY_FIELD_MAX = 22;

/** POST /legacy/query: the legacy e-transfer query (types 1, 4, 5, 6), form-encoded, answered as CSV lines. */
export async function legacyQuery(
  state: SandboxState,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const text = await readBody(req);
  const plain = (status: number, message: string) => new HttpFailure(status, message);
  if (!String(req.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded')) {
    throw plain(400, 'ERROR: form-encoded body expected');
  }
  const form = new URLSearchParams(text);
  const page = state.faults.legacyErrorPage;
  if (page) {
    count(state.stats.faultsInjected, `legacy-${page}`);
    res.writeHead(200, { 'content-type': LEGACY_ERROR_PAGES[page].contentType });
    res.end(LEGACY_ERROR_PAGES[page].body);
    return;
  }
  for (const key of new Set(form.keys())) {
    if (form.getAll(key).length > 1) throw plain(400, `ERROR: parameter ${key} given more than once`);
  }
  if (
    form.get('merchant_id') !== state.legacyMerchantId ||
    form.get('merchant_pass') !== state.legacyMerchantPass
  ) {
    throw plain(401, 'ERROR: invalid merchant_id or merchant_pass');
  }
  const type = form.get('query_type') ?? '';
  if (!['1', '4', '5', '6'].includes(type)) throw plain(400, `ERROR: query_type ${type} is not supported`);
  const sdate = form.get('query_sdate') ?? '';
  const edate = form.get('query_edate') ?? '';
  if (!/^\d{8}$/.test(sdate) || !/^\d{8}$/.test(edate)) throw plain(400, 'ERROR: dates must be YYYYMMDD');
  const from = `${sdate.slice(0, 4)}-${sdate.slice(4, 6)}-${sdate.slice(6)}`;
  const to = `${edate.slice(0, 4)}-${edate.slice(4, 6)}-${edate.slice(6)}`;
  const span = daysInclusive(from, to);
  if (span < 1) throw plain(400, 'ERROR: query_edate is before query_sdate');
  if (span > MAX_WINDOW_DAYS) throw plain(400, `ERROR: date range exceeds ${MAX_WINDOW_DAYS} days`);
  const txnNum = form.get('merchant_txn_num')?.trim() || null;
  let fields: number[] = type === '5' || type === '6' ? [...LEGACY_DEFAULT_FIELDS[type]] : [];
  const rf = form.get('response_fields');
  if (rf && (type === '5' || type === '6')) {
    const list = rf.split(',').map((s) => Number(s.trim()));
    if (list.some((n) => !Number.isInteger(n) || n < 1 || n > LEGACY_FIELD_MAX)) {
      throw plain(400, 'ERROR: response_fields holds an unknown field');
    }
    if (new Set(list).size !== list.length) throw plain(400, 'ERROR: response_fields holds a duplicate');
    if (type === '5' && list.includes(19)) throw plain(400, 'ERROR: field 19 is not valid for query type 5');
    fields = list;
  }
  await delayWindow(state, from);
  const query = {
    start: new Date(easternMidnightMs(from)).toISOString(),
    end: new Date(easternMidnightMs(addDays(to, 1))).toISOString(),
    asOf: state.asOf,
  };
  const { history } = state;
  const lines = (function* () {
    if (type === '5' || type === '6') {
      for (const r of history.legacyTransactions({ ...query, queryType: type })) {
        if (!txnNum || r.merchant_transaction_id === txnNum) yield legacyTransactionLine(r, fields);
      }
    } else if (type === '1') {
      for (const r of history.legacyReturns(query)) {
        if (!txnNum || r.merchant_transaction_id === txnNum) yield legacyReturnLine(r);
      }
    } else {
      for (const r of history.adjustments(query)) yield legacyAdjustmentLine(r);
    }
  })();
  const extra = state.faults.extraColumn === true;
  if (extra) count(state.stats.faultsInjected, 'extra-column');
  const served = extra ? withExtraColumn(lines) : lines;
  await streamBody(state, res, 'text/plain; charset=utf-8', linesInChunks(served), false);
}

/** Each line with one more column at its end (fault extraColumn). */
function* withExtraColumn(lines: Iterable<string>): Generator<string> {
  for (const line of lines) yield line.endsWith('\n') ? `${line.slice(0, -1)},X\n` : `${line},X`;
}
