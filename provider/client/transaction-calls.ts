import { authorised } from './authorised.ts';
import type { ProviderConnection } from './connection.ts';

/** The per-transaction calls of the report API: status, and ConfirmTrans. */

/** POST {base}/report/v4/transaction-status. */
export async function requestTransactionStatus(
  conn: ProviderConnection,
  transactionId: string,
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  const what = `transaction status of ${transactionId}`;
  const res = await authorised(conn, what, '/report/v4/transaction-status', { transactionId }, signal);
  return (await res.body.json()) as Record<string, unknown>;
}

/** POST {base}/service/servlet/ConfirmTrans with a ConfirmTransactionRequest. */
export async function confirmTransaction(
  conn: ProviderConnection,
  body: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<{ verification_code: string }> {
  const res = await authorised(conn, 'ConfirmTrans', '/service/servlet/ConfirmTrans', body, signal);
  return (await res.body.json()) as { verification_code: string };
}
