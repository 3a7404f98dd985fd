import { createHash } from 'node:crypto';
import { accountNameProblem, DEFAULT_ACCOUNT } from '../../domain/account-name.ts';
import { checkTolerance, InvalidTolerance, type ToleranceChange } from './tolerance.ts';

/**
 * A proposed settings file (`recon rules preview --settings FILE`, then `recon tolerances apply
 * FILE`): JSON, one entry per account and currency, with the warehouse's column names:
 *
 *     { "note": "bank rounds fees",
 *       "tolerances": [ { "account": "default", "currency": "CAD", "amount_tolerance_cents": 1,
 *                         "date_lag_business_days": 0, "write_off_limit_cents": 5 } ] }
 *
 * `account` defaults to `default`; a missing figure is 0. Currencies the file does not name keep
 * the account's tolerance.
 */
export interface SettingsProposal {
  readonly note: string | null;
  readonly tolerances: readonly (ToleranceChange & { readonly account: string })[];
  /** SHA-256 of the canonical JSON of the above: the same proposal, the same hash. */
  readonly sha256: string;
}

const FIELDS = ['amount_tolerance_cents', 'date_lag_business_days', 'write_off_limit_cents'] as const;
const KEYS = new Set<string>(['account', 'currency', ...FIELDS]);

/** Parses a settings file's text; every problem is an InvalidTolerance naming the file and entry. */
export function parseSettingsFile(text: string, file: string): SettingsProposal {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new InvalidTolerance(`${file}: not JSON (${(error as Error).message})`);
  }
  const root = doc as { note?: unknown; tolerances?: unknown };
  if (typeof doc !== 'object' || doc === null || !Array.isArray(root.tolerances))
    throw new InvalidTolerance(
      `${file}: give {"tolerances": [{"account", "currency", ${FIELDS.join(', ')}}]}`,
    );
  if (root.note !== undefined && typeof root.note !== 'string')
    throw new InvalidTolerance(`${file}: note must be text`);
  const seen = new Set<string>();
  const tolerances = root.tolerances.map((entry: unknown, i: number) => {
    const where = `${file}: tolerances[${i}]`;
    if (typeof entry !== 'object' || entry === null) throw new InvalidTolerance(`${where}: give an object`);
    const e = entry as Record<string, unknown>;
    const unknown = Object.keys(e).filter((k) => !KEYS.has(k));
    if (unknown.length > 0)
      throw new InvalidTolerance(`${where}: unknown ${unknown.join(', ')}; allowed: ${[...KEYS].join(', ')}`);
    const account = e.account ?? DEFAULT_ACCOUNT;
    const problem = accountNameProblem(account);
    if (problem !== null) throw new InvalidTolerance(`${where}: ${problem}`);
    const currency = String(e.currency ?? '');
    const figure = (k: (typeof FIELDS)[number]) => (e[k] === undefined ? 0 : (e[k] as number));
    try {
      const t = checkTolerance(currency, {
        amountCents: figure('amount_tolerance_cents'),
        dateLagBusinessDays: figure('date_lag_business_days'),
        writeOffLimitCents: figure('write_off_limit_cents'),
      });
      const key = `${String(account)}/${currency}`;
      if (seen.has(key))
        throw new InvalidTolerance(`${key} is named twice: name each account and currency once`);
      seen.add(key);
      return { account: account as string, currency, ...t };
    } catch (error) {
      throw new InvalidTolerance(`${where}: ${(error as Error).message}`);
    }
  });
  if (tolerances.length === 0) throw new InvalidTolerance(`${file}: no tolerance in "tolerances"`);
  tolerances.sort((a, b) => (a.account + a.currency < b.account + b.currency ? -1 : 1));
  const note = root.note ?? null;
  const sha256 = createHash('sha256').update(JSON.stringify({ note, tolerances })).digest('hex');
  return { note, tolerances, sha256 };
}
