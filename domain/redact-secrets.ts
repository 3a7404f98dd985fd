/**
 * Secrets in text that a provider sent back (an error page, a login form, an echo of the request):
 * the start of such a body is quoted in errors so that a person can see what came instead of the data,
 * and it must not carry a password or a token into a log, a workflow history or the database. Pure.
 */

import { redactPersonal } from './privacy.ts';

/** What replaces a secret value. */
export const SECRET_MARK = '[secret]';

/**
 * Names whose value is a secret, as a form parameter, a JSON member or prose `name: value` (an
 * Authorization header is caught by its scheme, below).
 */
const SECRET_NAMES =
  'merchant_pass|merchantpass|password|passwd|pwd|pass|client_secret|clientsecret|secret|access_token|accesstoken|refresh_token|id_token|token|api_key|apikey|session|sessionid|csrf|csrf_token|_token';

/** `name=value`, `name: value`, `"name": "value"` (the quote and separator kept, the value replaced). */
const NAMED_VALUE = new RegExp(
  `((?:["']?)\\b(?:${SECRET_NAMES})\\b["']?\\s*[:=]\\s*["']?)([^"'\\s&,;<>]+)`,
  'gi',
);
/** HTML form fields carry their value in `value="..."`: every one is replaced (hidden inputs hold tokens). */
const HTML_VALUE = /(\bvalue\s*=\s*)(?:"[^"]*"|'[^']*'|[^\s>]+)/gi;
/** `Bearer xxx` and `Basic xxx` credentials. */
const AUTH_SCHEME = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;
/** A JSON Web Token, wherever it stands (three base64url parts, the first a JSON header). */
const JWT = /\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;

/**
 * The text with secret values replaced by {@link SECRET_MARK}: values named like a password or a token,
 * HTML form values, bearer and basic credentials, JSON Web Tokens, and every literal occurrence of the
 * `known` secrets (the configured credentials, which a provider may echo under any name).
 *
 * @example redactSecrets('Error: invalid merchant_pass=hunter2') // 'Error: invalid merchant_pass=[secret]'
 */
export function redactSecrets(text: string, known: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of known) {
    // A secret of a few characters would match ordinary words; such a secret is no secret anyway.
    if (secret !== undefined && secret.length >= 6) out = out.split(secret).join(SECRET_MARK);
  }
  return out
    .replace(AUTH_SCHEME, `$1 ${SECRET_MARK}`)
    .replace(JWT, SECRET_MARK)
    .replace(HTML_VALUE, `$1"${SECRET_MARK}"`)
    .replace(NAMED_VALUE, `$1${SECRET_MARK}`);
}

/** Characters of an answer quoted in an error: enough to read an error line or a page's title. */
export const START_CHARS = 160;

/**
 * The first {@link START_CHARS} characters of a text that came instead of data, on one line, for an
 * error message: secrets (and the `known` ones) and personal data redacted before it is cut, so that
 * the cut cannot leave part of a secret behind.
 */
export function quotedStart(text: string, known: readonly (string | undefined)[] = []): string {
  const line = redactPersonal(redactSecrets(text.replace(/\s+/g, ' ').trim(), known));
  return line.length > START_CHARS ? `${line.slice(0, START_CHARS)}…` : line;
}
