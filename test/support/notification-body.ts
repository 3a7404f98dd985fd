/**
 * A transaction notification as the provider posts it (docs/provider-interface.md 6), for the receiver tests:
 * `merchant`, `accountInfo` and `transaction` members override or add fields of the usual body (a
 * member set to undefined is left out of the JSON; `accountInfo: null` leaves out the whole block).
 */
export function notificationBody(
  transactionId: string,
  over: {
    merchant?: Record<string, unknown>;
    accountInfo?: Record<string, unknown> | null;
    transaction?: Record<string, unknown>;
  } = {},
): Record<string, unknown> {
  return {
    merchant: {
      merchantId: 'IBTMERCH0001',
      merchantTransactionId: `M-${transactionId}`.slice(0, 30),
      merchantUserId: 'user-1',
      ...over.merchant,
    },
    ...(over.accountInfo === null
      ? {}
      : {
          accountInfo: {
            accountToken: 'acct-1',
            accountLabel: '****1234',
            accountType: 'PC',
            fiName: 'Maple Bank',
            ...over.accountInfo,
          },
        }),
    transaction: {
      transactionId,
      transactionType: 'DEBIT',
      transactionStatus: 'SUCCESS',
      transactionAmount: 2015,
      transactionFee: 30,
      currencyCode: 'CAD',
      ...over.transaction,
    },
  };
}
