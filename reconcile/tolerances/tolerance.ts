/**
 * Matching tolerances per account and currency (migration 0026, table `matching_tolerances`;
 * docs/finance.md, "Tolerances and write-offs"). What they mean to the rules:
 * - `amountCents`: an amount or fee difference of at most this many cents is no difference (equal).
 * - `writeOffLimitCents`: a difference beyond the tolerance and of at most this many cents is a
 *   discrepancy that the run resolves at once as `written_off`, with its reason, listed in
 *   `write_offs`. A limit at or under the tolerance would never apply, and is refused (0 = none).
 * - `dateLagBusinessDays`: business days added to the grace periods of the rules that wait for the
 *   other side (missing_at_provider, return_not_booked).
 * All zero, or no row: exact matching, as before tolerances existed.
 *
 * Versioned per account: a change inserts the changed currencies' rows under the account's next
 * version (columns account, currency, version, amount_tolerance_cents, date_lag_business_days,
 * write_off_limit_cents, set_by, set_at, note, settings_id); the table refuses updates and deletes.
 * The tolerance of a currency at version V is its row of the greatest version <= V.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { UsageError } from '../../domain/errors.ts';

export interface Tolerance {
  readonly amountCents: number;
  readonly dateLagBusinessDays: number;
  readonly writeOffLimitCents: number;
}

export const EXACT: Tolerance = Object.freeze({
  amountCents: 0,
  dateLagBusinessDays: 0,
  writeOffLimitCents: 0,
});

/** An account's tolerances at one version: `of` answers EXACT for a currency without a row. */
export interface Tolerances {
  /** 0 when the account never had any. */
  readonly version: number;
  of(currency: string): Tolerance;
  /** The currencies whose tolerance is not EXACT, sorted by currency. */
  readonly currencies: readonly (Tolerance & { readonly currency: string })[];
}

/** A tolerance that cannot be one (a negative amount, a limit under the tolerance, a bad currency). */
export class InvalidTolerance extends UsageError {}

const CURRENCY = /^[A-Z]{3}$/;

/** Checks one proposed tolerance; the message names what is wrong and how to fix it. */
export function checkTolerance(currency: string, t: Tolerance): Tolerance {
  if (!CURRENCY.test(currency))
    throw new InvalidTolerance(
      `tolerance currency ${JSON.stringify(currency)}: use three uppercase letters (CAD)`,
    );
  const fields: [keyof Tolerance, string][] = [
    ['amountCents', 'amount tolerance (cents)'],
    ['dateLagBusinessDays', 'date lag (business days)'],
    ['writeOffLimitCents', 'write-off limit (cents)'],
  ];
  for (const [key, words] of fields) {
    const v = t[key];
    if (!Number.isSafeInteger(v) || v < 0)
      throw new InvalidTolerance(`${currency} ${words} ${String(v)}: use a whole number, 0 or more`);
  }
  if (t.writeOffLimitCents !== 0 && t.writeOffLimitCents <= t.amountCents)
    throw new InvalidTolerance(
      `${currency} write-off limit ${t.writeOffLimitCents} is not above the amount tolerance ${t.amountCents}: a difference within the tolerance is already equal; give a limit above it, or 0 for none`,
    );
  return Object.freeze({
    amountCents: t.amountCents,
    dateLagBusinessDays: t.dateLagBusinessDays,
    writeOffLimitCents: t.writeOffLimitCents,
  });
}

/** Tolerances from a version and rows (a proposal, or what loadTolerances read). */
export function tolerancesOf(
  version: number,
  rows: readonly (Tolerance & { readonly currency: string })[],
): Tolerances {
  const by = new Map<string, Tolerance>();
  for (const r of rows) by.set(r.currency, checkTolerance(r.currency, r));
  const currencies = [...by]
    .filter(([, t]) => t.amountCents > 0 || t.dateLagBusinessDays > 0 || t.writeOffLimitCents > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([currency, t]) => Object.freeze({ currency, ...t }));
  return Object.freeze({ version, of: (currency: string) => by.get(currency) ?? EXACT, currencies });
}

/**
 * The account's tolerances: its latest version, or `atVersion` (a version a run recorded).
 *
 * @example
 *   const t = await loadTolerances(trx, 'ca-main');
 *   if (Math.abs(diff) <= t.of('CAD').amountCents) { ... equal ... }
 */
export async function loadTolerances(db: Db, account: string, atVersion?: number): Promise<Tolerances> {
  const r = await sql<{
    version: string;
    currency: string;
    amount: string;
    lag: number;
    limit: string;
  }>`select distinct on (currency) version::text as version, currency::text as currency,
      amount_tolerance_cents::text as amount, date_lag_business_days as lag, write_off_limit_cents::text as limit
    from public.matching_tolerances
    where account = ${account} and (${atVersion ?? null}::bigint is null or version <= ${atVersion ?? null}::bigint)
    order by currency, version desc`.execute(db);
  const version = atVersion ?? r.rows.reduce((v, row) => Math.max(v, Number(row.version)), 0);
  return tolerancesOf(
    version,
    r.rows.map((row) => ({
      currency: row.currency,
      amountCents: Number(row.amount),
      dateLagBusinessDays: row.lag,
      writeOffLimitCents: Number(row.limit),
    })),
  );
}

/** One currency's new tolerance, as `recon tolerances set` and a settings file give it. */
export interface ToleranceChange extends Tolerance {
  readonly currency: string;
}

/**
 * Sets the tolerances of `changes` for `account` as its next version, in one transaction (other
 * currencies keep theirs). Returns the new version. Versions of one account are taken one at a time
 * (a lock of the table for the transaction: changes are rare).
 */
export async function setTolerances(
  db: Db,
  req: {
    readonly account: string;
    readonly changes: readonly ToleranceChange[];
    readonly setBy: string;
    readonly note?: string | null;
    readonly settingsId?: number | null;
  },
): Promise<number> {
  const changes = req.changes.map((c) => ({ currency: c.currency, ...checkTolerance(c.currency, c) }));
  if (changes.length === 0) throw new InvalidTolerance('no tolerance to set: name at least one currency');
  const run = async (trx: Db): Promise<number> => {
    await sql`lock table public.matching_tolerances in share row exclusive mode`.execute(trx);
    const last = await sql<{ v: string }>`
      select coalesce(max(version), 0)::text as v from public.matching_tolerances where account = ${req.account}`.execute(
      trx,
    );
    const version = Number(last.rows[0]!.v) + 1;
    await trx
      .insertInto('matching_tolerances')
      .values(
        changes.map((c) => ({
          account: req.account,
          currency: c.currency,
          version,
          amount_tolerance_cents: c.amountCents,
          date_lag_business_days: c.dateLagBusinessDays,
          write_off_limit_cents: c.writeOffLimitCents,
          set_by: req.setBy,
          note: req.note ?? null,
          settings_id: req.settingsId ?? null,
        })),
      )
      .execute();
    return version;
  };
  return 'isTransaction' in db && db.isTransaction ? run(db) : db.transaction().execute(run);
}

/** Every version of the account's tolerances, newest first, for `recon tolerances history`. */
export async function toleranceHistory(db: Db, account: string) {
  return db
    .selectFrom('matching_tolerances')
    .select([
      'version',
      'currency',
      'amount_tolerance_cents',
      'date_lag_business_days',
      'write_off_limit_cents',
      'set_by',
      'set_at',
      'note',
      'settings_id',
    ])
    .where('account', '=', account)
    .orderBy('version', 'desc')
    .orderBy('currency')
    .execute();
}
