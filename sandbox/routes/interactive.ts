import { notificationStatus } from '../notifications.ts';
import { invalid, sendJson } from '../server/http.ts';
import { sendNotification } from '../server/send-notifications.ts';
import type { Route } from '../server/state.ts';
import { authorisedJson } from './auth.ts';

/** POST /txn/transaction/v4/interactive: adds a transaction to the history and notifies it. */
export const interactive: Route = async (state, req, res) => {
  const body = await authorisedJson(state, req);
  const merchant = (body.merchant ?? {}) as Record<string, unknown>;
  const amount = body.transactionAmount;
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount)) {
    throw invalid('V060', 'transactionAmount must be an integer');
  }
  const type = body.transactionType ?? merchant.merchantTransactionType;
  if (type !== 'DEBIT' && type !== 'CREDIT') throw invalid('V061', 'transactionType must be DEBIT or CREDIT');
  const mtid = merchant.merchantTransactionId;
  if (typeof mtid !== 'string' || mtid.length < 1 || mtid.length > 30) {
    throw invalid('V062', 'merchant.merchantTransactionId must have 1 to 30 characters');
  }
  const muid = merchant.merchantUserId;
  if (typeof muid !== 'string' || muid.length < 3 || muid.length > 64) {
    throw invalid('V063', 'merchant.merchantUserId must have 3 to 64 characters');
  }
  const currency = typeof body.currencyCode === 'string' ? body.currencyCode : 'CAD';
  if (!/^[A-Z]{3}$/.test(currency)) throw invalid('V064', 'currencyCode must be ISO 4217');
  const f = state.history.add({
    type,
    amountCents: amount,
    currency,
    merchantTransactionId: mtid,
    merchantUserId: muid,
    region: typeof body.transactionRegion === 'string' ? body.transactionRegion : undefined,
    countryCode: typeof body.countryCode === 'string' ? body.countryCode : undefined,
  });
  sendJson(res, 200, {
    transactionId: f.transactionId,
    transactionStatus: notificationStatus(f),
    errorCode: f.errorCode,
    errorMessage: f.errorMessage,
    redirectUrl: `${state.baseUrl}/consumer/${f.transactionId}`,
  });
  void sendNotification(state, 'transaction', f);
};
