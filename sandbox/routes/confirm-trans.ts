import { createHash } from 'node:crypto';
import { invalid, sendJson } from '../server/http.ts';
import type { Route } from '../server/state.ts';
import { authorisedJson } from './auth.ts';

/** POST /api/service/servlet/ConfirmTrans: records the body and answers a verification code. */
export const confirmTrans: Route = async (state, req, res) => {
  const body = await authorisedJson(state, req);
  const merchant = body.merchant as Record<string, unknown> | undefined;
  const transaction = body.transaction as Record<string, unknown> | undefined;
  if (!merchant || typeof merchant.merchantTransactionId !== 'string') {
    throw invalid('V050', 'merchant.merchantTransactionId is required');
  }
  if (!transaction || typeof transaction.transactionId !== 'string') {
    throw invalid('V051', 'transaction.transactionId is required');
  }
  state.confirmations.push(body);
  const code = createHash('sha256').update(`${transaction.transactionId}`).digest('hex').slice(0, 12);
  sendJson(res, 200, { verification_code: `VC${code.toUpperCase()}` });
};
