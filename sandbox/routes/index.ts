import type { Route } from '../server/state.ts';
import { confirmTrans } from './confirm-trans.ts';
import { interactive } from './interactive.ts';
import { legacyQuery } from './legacy-query.ts';
import { report } from './report.ts';
import { transactionStatus } from './transaction-status.ts';

/** The data endpoints by path (the token endpoint is apart: faults never hit it). */
export const DATA_ROUTES: Readonly<Record<string, Route>> = {
  '/api/report/v4/report': report,
  '/api/report/v4/transaction-status': transactionStatus,
  '/api/service/servlet/ConfirmTrans': confirmTrans,
  '/txn/transaction/v4/interactive': interactive,
  '/legacy/query': legacyQuery,
};
