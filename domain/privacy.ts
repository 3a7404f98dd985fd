/**
 * Consumers' personal data (docs/security.md, "Personal data"): e-mail addresses, bank account
 * numbers (even masked), account tokens and labels, consumer names. Errors, rejected-row reasons,
 * quarantine reasons and logs never echo them: every message that may quote input goes through
 * {@link redactPersonal} before it is stored, thrown or printed.
 *
 * The same patterns are the SQL function redact_personal (migration 0005_analysts_and_privacy), which the
 * analysts' *_redacted views and `recon retention` apply to raw lines and payloads; a unit test keeps
 * the two in step. Pure: no I/O.
 */

/** What replaces a personal value, in messages and in the warehouse. Also the COMMENT marker. */
export const PERSONAL_MARK = '[personal data]';

/** JSON member names (lower case, `_` and `-` removed) whose values are personal data. */
export const PERSONAL_KEYS: readonly string[] = [
  'email',
  'consumeremail',
  'emailaddress',
  'bankaccountmasked',
  'bankaccount',
  'accountnumber',
  'accounttoken',
  'accountlabel',
  'accountmask',
  'obvtoken',
  'firstname',
  'lastname',
  'middlename',
  'fullname',
  'consumername',
  'phonenumber',
  'dob',
  'address',
  'address2',
  'postalcode',
  'driverslicense',
];

// Both also match a value cut short at the end of the text: messages quote snippets of input.
const KEYED_MEMBER = new RegExp(
  `("(?:${PERSONAL_KEYS.map((k) => k.split('').join('[_-]?')).join('|')})"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*(?:"|$)`,
  'gi',
);
const EMAIL = /[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|[A-Za-z0-9.-]*$)/g;
/** The legacy layout xxx-xxxxx-n (institution, transit, account), masked or not. */
const BANK_ACCOUNT = /[0-9Xx*]{3}-[0-9Xx*]{5}-[0-9Xx*]{1,24}/g;
/** accountLabel / accountMask: ****1234. */
const MASKED_LABEL = /[*Xx]{4}[0-9]{4}/g;

/**
 * The text with personal data replaced by {@link PERSONAL_MARK}: JSON members named like personal
 * fields, e-mail addresses, bank account numbers and masked labels. Idempotent. A token in a field
 * with an unknown name cannot be recognised by its shape: messages therefore never quote whole
 * input lines (see {@link describeJsonError} and the header messages of the parsers).
 */
export function redactPersonal(text: string): string {
  return text
    .replace(KEYED_MEMBER, `$1"${PERSONAL_MARK}"`)
    .replace(EMAIL, PERSONAL_MARK)
    .replace(BANK_ACCOUNT, PERSONAL_MARK)
    .replace(MASKED_LABEL, PERSONAL_MARK);
}

/**
 * A JSON.parse error without the piece of input V8 quotes in it (`Unexpected token 'a', "{"accoun"...
 * is not valid JSON`): the position stays, the content goes.
 */
export function describeJsonError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const quoted = message.indexOf(', "');
  if (/is not valid JSON$/.test(message) && quoted > 0) return `${message.slice(0, quoted)} (not valid JSON)`;
  return redactPersonal(message);
}

/**
 * What a refused header row held, for its error message: how many columns, and the names among them
 * that the format knows. The other cells are not quoted: a "header" that is really a data line (a
 * file without its header, the wrong --query-type) holds a consumer's e-mail or account.
 */
export function describeHeader(cells: readonly string[], isKnown: (cell: string) => boolean): string {
  const known = cells.filter(isKnown);
  const others = cells.length - known.length;
  return `found ${cells.length} column${cells.length === 1 ? '' : 's'}: ${
    known.length > 0 ? known.join(', ') : 'none known'
  }${others > 0 ? ` and ${others} other${others === 1 ? '' : 's'} (not shown)` : ''}`;
}
