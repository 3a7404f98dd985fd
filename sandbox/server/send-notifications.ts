import type { HistoryQuery, HistoryTransaction } from '../history.ts';
import {
  deliverNotification,
  returnNotificationBody,
  transactionNotificationBody,
} from '../notifications.ts';
import { asOfMicros, type SandboxState } from './state.ts';

/** The sandbox as the provider that notifies the merchant: one notification, or every one of a window. */

/** Where each kind of notification goes; see SandboxOptions.notifyUrl. */
export function notificationTargets(
  notifyUrl: string | undefined,
  returnNotifyUrl?: string,
): { transaction: string; return: string } | null {
  if (!notifyUrl) return null;
  const url = new URL(notifyUrl);
  if (url.pathname === '/' || url.pathname === '') {
    return {
      transaction: `${url.origin}/notifications/transaction`,
      return: returnNotifyUrl ?? `${url.origin}/notifications/return`,
    };
  }
  return {
    transaction: notifyUrl,
    return: returnNotifyUrl ?? notifyUrl.replace(/\/transaction$/, '/return'),
  };
}

/** Sends one notification in the background (tracked in state.inFlight); resolves once it is recorded. */
export function sendNotification(
  state: SandboxState,
  kind: 'transaction' | 'return',
  f: HistoryTransaction,
): Promise<void> {
  const url = state.notifications.targets?.[kind];
  if (!url) return Promise.resolve();
  const body =
    kind === 'transaction'
      ? transactionNotificationBody(f, state.merchantId)
      : returnNotificationBody(f, state.merchantId);
  const p = deliverNotification(url, kind, body, {
    attempts: state.notifications.attempts,
    backoffMs: state.notifications.backoffMs,
    secret: state.notifications.secret,
  }).then((d) => {
    state.deliveries.push(d);
  });
  state.inFlight.add(p);
  void p.finally(() => state.inFlight.delete(p));
  return p;
}

/** Sends the notifications of the transactions received (and returns made) in the window. */
export async function notifyWindow(
  state: SandboxState,
  query: Pick<HistoryQuery, 'start' | 'end'> = {},
): Promise<{ sent: number; delivered: number }> {
  const { history, asOf, deliveries } = state;
  let sent = 0;
  const before = deliveries.length;
  const jobs: Promise<void>[] = [];
  for (const f of history.facts({ ...query, asOf })) {
    if (f.channel === 'legacy' || f.notifyStatus === 'I') continue;
    jobs.push(sendNotification(state, 'transaction', f));
    sent++;
  }
  const asOfUs = asOfMicros(state);
  const startUs = query.start ? Date.parse(query.start) * 1000 : Number.MIN_SAFE_INTEGER;
  const endUs = query.end ? Date.parse(query.end) * 1000 : Number.MAX_SAFE_INTEGER;
  for (const f of history.facts({ asOf })) {
    const r = f.return;
    if (!r || f.channel === 'legacy' || r.returnedAtMicros < startUs || r.returnedAtMicros >= endUs) continue;
    if (r.returnedAtMicros > asOfUs) continue;
    jobs.push(sendNotification(state, 'return', f));
    sent++;
  }
  await Promise.all(jobs);
  return { sent, delivered: deliveries.slice(before).filter((d) => d.delivered).length };
}
