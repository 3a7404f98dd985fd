import { notificationStatus } from '../notifications.ts';
import { invalid, sendJson } from '../server/http.ts';
import { asOfMicros, type Route } from '../server/state.ts';
import { authorisedJson } from './auth.ts';

/** POST /api/report/v4/transaction-status: one transaction's status as known at the sandbox's asOf. */
export const transactionStatus: Route = async (state, req, res) => {
  const body = await authorisedJson(state, req);
  if (typeof body.transactionId !== 'string' || body.transactionId === '') {
    throw invalid('V040', 'transactionId is required');
  }
  const f = state.history.findByTransactionId(body.transactionId);
  if (!f) throw invalid('V041', `transaction ${body.transactionId} was not found`);
  const asOfUs = asOfMicros(state);
  const returned = f.return && f.return.returnedAtMicros <= asOfUs ? f.return : null;
  const status =
    asOfUs < f.settledAtMicros
      ? 'PENDING'
      : returned
        ? returned.representment
          ? 'RETURNED_WITH_REPRESENTMENT'
          : 'RETURNED'
        : notificationStatus(f);
  sendJson(res, 200, {
    merchant: {
      merchantId: state.merchantId,
      merchantTransactionId: f.merchantTransactionId,
      merchantUserId: f.merchantUserId,
    },
    transaction: {
      transactionType: f.type,
      transactionFee: status === 'PENDING' ? 0 : f.feeCents,
      transactionStatus: status,
      currencyCode: f.currency,
      transactionId: f.transactionId,
      paymentMethod: 'EFT',
      errorCode: status === 'PENDING' ? null : f.errorCode,
      ...(returned ? { returnCode: returned.returnCode, nextActionDate: returned.nextActionDate } : {}),
    },
    account: {
      accountMask: f.accountLabel,
      bankName: f.bankName,
      obvToken: f.accountToken,
      accountType: f.accountType,
    },
  });
};
