/**
 * Normalised records: what the parsers yield and the loader writes, named with the warehouse columns
 * (so `recon parse` prints exactly what `recon import` would load). Money is integer cents, instants
 * are ISO-8601 UTC strings kept to the microsecond (`2026-03-08T07:30:00.123456Z`), dates `YYYY-MM-DD`.
 */

import type { Selectable } from 'kysely';
import type { Spec, TableOf } from './columns.ts';
import type {
  adjustmentColumns,
  ledgerColumns,
  legacyTransactionColumns,
  rawColumn,
  returnColumns,
  transactionColumns,
} from './record-columns.ts';

/** A record's fields: the columns of record-columns.ts as they are read back (no lineage). */
type Fields<C extends Record<string, Spec>> = Selectable<TableOf<C>>;
/** A report record's fields, with the text it was read from. */
type Read<C extends Record<string, Spec>> = Fields<C & typeof rawColumn>;

export type TransactionRecord = { kind: 'transaction' } & Read<typeof transactionColumns>;
export type LegacyTransactionRecord = { kind: 'legacy-transaction' } & Read<typeof legacyTransactionColumns>;
export type ReturnRecord = { kind: 'return' } & Read<typeof returnColumns>;
/** adjustment_key is completed by the loader with the occurrence number (#1, #2...) of identical rows. */
export type AdjustmentRecord = { kind: 'adjustment' } & Read<typeof adjustmentColumns>;
/**
 * A ledger entry may name its account (`account` column) or its provider merchant (`merchant_id`,
 * mapped to an account by the accounts configuration); the loader settles `account` before staging.
 */
export type LedgerRecord = { kind: 'ledger' } & Fields<typeof ledgerColumns> & {
    account?: string | null;
    merchant_id?: string | null;
  };

export type ReportRecord = TransactionRecord | LegacyTransactionRecord | ReturnRecord | AdjustmentRecord;
export type AnyRecord = ReportRecord | LedgerRecord;

/** One data record read from a file: either a normalised record or the reason it was rejected. */
export type ParsedRow<R = AnyRecord> =
  | { readonly ok: true; readonly line: number; readonly raw: string; readonly record: R }
  | { readonly ok: false; readonly line: number; readonly raw: string; readonly reason: string };

/**
 * Told by a parser which warehouse columns its input carries for a kind of record (the format's
 * fields, a CSV's header, a legacy field list). A column not carried is unknown, not null: a record's
 * value for it is always null and says nothing. Called before the parser's iteration ends; a later
 * call for the same kind replaces an earlier one.
 */
export type OnColumns = (kind: AnyRecord['kind'], columns: readonly string[]) => void;

/** Input formats of `recon parse` / `recon import` (docs/reference.md). */
export type ReportFormat = 'legacy' | 'report-json' | 'report-csv';
export type LegacyQueryType = '1' | '4' | '5' | '6';
export type ReportQueryType = 'TRANSACTION' | 'RETURN';

/** The five pull sources (docs/provider-interface.md 2), plus the ledger. */
export const SOURCES = [
  'report-transactions',
  'report-returns',
  'legacy-transactions',
  'legacy-returns',
  'legacy-adjustments',
] as const;
export type Source = (typeof SOURCES)[number];
export type LoadSource = Source | 'ledger';

export const CANONICAL_STATUSES = ['SUCCESSFUL', 'PENDING', 'REJECTED', 'FAILED', 'RETURNED'] as const;
export type CanonicalStatus = (typeof CANONICAL_STATUSES)[number];
