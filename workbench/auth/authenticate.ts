/**
 * Who is asking, for every route that needs a role: a Bearer token, a session cookie, or the user a
 * trusted single-sign-on proxy names in its header. The header is believed only on a connection from
 * one of the configured proxy addresses (RECON_WORKBENCH_TRUSTED_PROXIES): from anywhere else it is
 * ignored, as if absent. A proxy-named user gets no session row: its CSRF token is a random cookie of
 * its own (`recon_csrf`, SameSite=Strict) that state changes must echo in X-CSRF-Token, which a page
 * of another site can neither read nor send.
 */
import { BlockList, isIP } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseCookies, SESSION_COOKIE, type WorkbenchContext } from '../context.ts';
import { newSecret, sameSecret } from './secrets.ts';
import { enabledUser, sessionPrincipal, tokenPrincipal, type Principal } from './sessions.ts';

export const CSRF_COOKIE = 'recon_csrf';

/** The single-sign-on settings: the header, and the addresses it is believed from. */
export interface SsoSettings {
  /** e.g. X-Forwarded-User. */
  readonly header: string;
  /** Addresses or CIDR ranges of the proxies (IPv4 or IPv6). */
  readonly proxies: readonly string[];
}

/** A matcher for addresses and CIDR ranges; throws RangeError naming an entry that is neither. */
export function addressMatcher(entries: readonly string[]): (address: string | undefined) => boolean {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', bits] = entry.trim().split('/');
    const type = isIP(address);
    if (type === 0 || (bits !== undefined && !/^\d{1,3}$/.test(bits)))
      throw new RangeError(`${JSON.stringify(entry)} is not an IP address or CIDR range`);
    const family = type === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return (address) => {
    if (!address) return false;
    const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    if (v4) return list.check(v4, 'ipv4');
    return list.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
  };
}

function csrfCookie(request: FastifyRequest, value: string): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${CSRF_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict${secure}`;
}

async function ssoPrincipal(
  ctx: WorkbenchContext,
  request: FastifyRequest,
  reply: FastifyReply,
  claimed: string,
): Promise<Principal | null> {
  // A name the proxy could not have meant (control characters, too long) is no user.
  if (!/^[\x21-\x7e]{1,200}$/.test(claimed.trim())) return null;
  const user = await enabledUser(ctx.db, claimed);
  if (!user) return null;
  let csrfToken = parseCookies(request.headers.cookie)[CSRF_COOKIE];
  if (!csrfToken || !/^[A-Za-z0-9_-]{43}$/.test(csrfToken)) {
    csrfToken = newSecret();
    reply.header('set-cookie', csrfCookie(request, csrfToken));
  }
  return { name: user.username, role: user.role, via: 'sso', csrfToken, accounts: user.accounts };
}

/**
 * The principal of a request, or null. A trusted proxy's header wins over a session of another
 * user (the proxy says who is at the keyboard now).
 */
export async function authenticate(
  ctx: WorkbenchContext,
  sso: { header: string; trusted: (address: string | undefined) => boolean } | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<Principal | null> {
  const auth = request.headers.authorization;
  if (auth?.startsWith('Bearer ')) return (await tokenPrincipal(ctx.db, auth.slice(7).trim())) ?? null;
  const secret = parseCookies(request.headers.cookie)[SESSION_COOKIE];
  const fromSession = secret ? await sessionPrincipal(ctx.db, ctx.sessions, secret) : undefined;
  const claimed =
    sso && sso.trusted(request.raw.socket.remoteAddress) ? request.headers[sso.header] : undefined;
  if (typeof claimed === 'string' && claimed.trim() !== '') {
    if (fromSession && fromSession.name === claimed.trim().toLowerCase()) return fromSession;
    return ssoPrincipal(ctx, request, reply, claimed);
  }
  return fromSession ?? null;
}

/** Whether a state change carries the CSRF token of its principal (tokens need none). */
export function csrfHolds(request: FastifyRequest, principal: Principal): boolean {
  if (principal.via === 'token') return true;
  const sent = request.headers['x-csrf-token'];
  if (typeof sent !== 'string' || !principal.csrfToken) return false;
  if (principal.via === 'sso') {
    const cookie = parseCookies(request.headers.cookie)[CSRF_COOKIE];
    if (cookie === undefined || !sameSecret(cookie, principal.csrfToken)) return false;
  }
  return sameSecret(sent, principal.csrfToken);
}
