import { createHash, timingSafeEqual } from 'node:crypto';
import type { Accounts } from '../../config/accounts.ts';
import type { NotificationKind } from './normalise-notification.ts';
import { DEFAULT_ACCOUNT } from '../../domain/account-name.ts';

/**
 * Which account a notification is filed under (docs/connecting-a-provider.md, "The notification receiver"): the account
 * its path names (`/notifications/<account>/<kind>`), the account whose own secret it presents, or
 * the account whose legacy merchant id is its `merchantId`. A warehouse with one account files
 * everything under it. When none of these names a configured account, or they contradict each
 * other, the notification is refused into quarantine with the reason.
 */
export interface Route {
  readonly kind: NotificationKind;
  /** The account the path names, if any (not yet checked against the configuration). */
  readonly account?: string;
}

const KINDS: Readonly<Record<string, NotificationKind>> = { transaction: 'transaction', return: 'return' };

/** `/notifications/<kind>` or `/notifications/<account>/<kind>`; undefined for any other path. */
export function routeOf(path: string): Route | undefined {
  const parts = path.split('/');
  if (parts[0] !== '' || parts[1] !== 'notifications') return undefined;
  if (parts.length === 3) {
    const kind = KINDS[parts[2]!];
    return kind ? { kind } : undefined;
  }
  if (parts.length === 4 && parts[2] !== '') {
    const kind = KINDS[parts[3]!];
    return kind ? { kind, account: parts[2]! } : undefined;
  }
  return undefined;
}

/** The secret a caller presented as a bearer token or as the basic-auth password. */
function presentedSecret(header: string | undefined): string | null {
  if (!header) return null;
  const [scheme = '', value = ''] = header.split(/\s+/, 2);
  if (scheme.toLowerCase() === 'bearer') return value;
  if (scheme.toLowerCase() === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon >= 0 ? decoded.slice(colon + 1) : null;
  }
  return null;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Constant-time check of the presented secret against the receiver's secret and every account's
 * own. Returns undefined when none matches; `{}` for the receiver's secret; `{ account }` for an
 * account's own secret (which then names the account). Every candidate is compared, so the time
 * taken does not tell which one matched.
 */
export function authorisedBy(
  header: string | undefined,
  secret: string | undefined,
  accounts: Accounts | undefined,
): { account?: string } | undefined {
  const presented = presentedSecret(header);
  if (presented === null) return undefined;
  const given = digest(presented);
  let result: { account?: string } | undefined;
  if (secret !== undefined && timingSafeEqual(given, digest(secret))) result = {};
  for (const a of accounts?.list ?? []) {
    if (a.notificationSecret === undefined) continue;
    if (timingSafeEqual(given, digest(a.notificationSecret)) && result === undefined) {
      result = { account: a.name };
    }
  }
  return result;
}

export type Filing = { ok: true; account: string } | { ok: false; account: string | null; reason: string };

/**
 * The account of a notification, from what names one: `named` (the path's or the secret's account)
 * and the payload's merchantId. Without a configuration, everything is `default`.
 */
export function fileUnder(
  accounts: Accounts | undefined,
  named: string | undefined,
  merchantId: string | null,
): Filing {
  if (!accounts) return { ok: true, account: DEFAULT_ACCOUNT };
  if (named !== undefined && !accounts.byName(named)) {
    return { ok: false, account: null, reason: `no account named '${named}' in the accounts configuration` };
  }
  const byMerchant = merchantId === null ? undefined : accounts.byMerchantId(merchantId);
  if (named !== undefined) {
    if (byMerchant && byMerchant.name !== named) {
      return {
        ok: false,
        account: named,
        reason: `merchantId '${merchantId}' is account ${byMerchant.name}'s, but the delivery names account ${named}`,
      };
    }
    return { ok: true, account: named };
  }
  if (byMerchant) return { ok: true, account: byMerchant.name };
  if (accounts.list.length === 1) return { ok: true, account: accounts.list[0]!.name };
  return {
    ok: false,
    account: null,
    reason:
      merchantId === null
        ? 'no account named: the body has no merchantId, and neither the path nor the secret names an account'
        : `merchantId '${merchantId}' is the legacy merchant id of no configured account`,
  };
}

/** The account a body the receiver cannot read is kept under: the named one, the only one, or none. */
export function quarantineAccount(accounts: Accounts | undefined, named: string | undefined): string | null {
  if (!accounts) return DEFAULT_ACCOUNT;
  if (named !== undefined) return accounts.byName(named) ? named : null;
  return accounts.list.length === 1 ? accounts.list[0]!.name : null;
}
