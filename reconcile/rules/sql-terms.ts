import { type RawBuilder, sql } from 'kysely';

/** A piece of SQL: text without parameters, or a builder that may carry some. */
export type Sql = string | RawBuilder<unknown>;

export function toSql(piece: Sql): RawBuilder<unknown> {
  return typeof piece === 'string' ? sql.raw(piece) : piece;
}

/** The class of a provider or ledger status that the rules compare: 'ok', 'failed' or null (pending, unknown). */
export function statusClass(col: string): string {
  return `(case when ${col} in ('SUCCESSFUL','RETURNED') then 'ok' when ${col} in ('REJECTED','FAILED') then 'failed' end)`;
}

/** Both sides are known and disagree (a side nobody reported is not a disagreement). */
export function differs(a: string, b: string): string {
  return `(${a} is not null and ${b} is not null and ${a} <> ${b})`;
}

/**
 * Columns that any two rows paired across sources (provider, ledger, notifications, legacy) must
 * share besides their key: a pairing never crosses them. One list, used by every join of the
 * claims, so that a partition of the warehouse (the provider account) is added here once.
 */
export const PAIRING_SCOPE: readonly string[] = [];

/**
 * `a.key = b.key` for a pairing, plus equality on every PAIRING_SCOPE column.
 * keyJoin('p', 'l', 'merchant_transaction_id') or keyJoin('n', 'p', 'transaction_id', 'transaction_id').
 */
export function keyJoin(a: string, b: string, aKey: string, bKey: string = aKey): string {
  return [`${a}.${aKey} = ${b}.${bKey}`, ...PAIRING_SCOPE.map((c) => `${a}.${c} = ${b}.${c}`)].join(' and ');
}

/**
 * One field compared between the report row (`f.<field>`) and another source's copy (`f.<other>`),
 * disagreeing when `condition` holds.
 */
export interface FieldCheck {
  readonly field: string;
  readonly other: string;
  readonly condition: string;
}

/** A field compared as-is: both sides known and different. */
export function fieldCheck(field: string, other: string): FieldCheck {
  return { field, other, condition: differs(`f.${other}`, `f.${field}`) };
}

/**
 * A status compared by class (ok / failed), so that SUCCESSFUL and RETURNED agree. A class nobody
 * reported is null, and so is `<>` with it: the condition is read only where null is not true (a
 * rule's `when`, the suspects' `or`, `case when`), so it needs no `is not null` of its own, which
 * computed each class twice for every fact the suspects read (their statement 1.12-1.17 s of server
 * CPU against 1.25-1.33 s at 1,000,000 rows, four alternated rounds, issue 30).
 */
export function statusCheck(field: string, other: string): FieldCheck {
  return { field, other, condition: `(${statusClass(`f.${other}`)} <> ${statusClass(`f.${field}`)})` };
}

/** Any of the checks disagrees. */
export function anyDiffers(checks: readonly FieldCheck[]): string {
  return `(${checks.map((c) => c.condition).join(' or ')})`;
}

/** A jsonb object of the fields that disagree, with the report's values or the other source's. */
export function differingFields(checks: readonly FieldCheck[], side: 'report' | 'other'): string {
  return checks
    .map(
      (c) =>
        `case when ${c.condition} then jsonb_build_object('${c.field}', f.${side === 'report' ? c.field : c.other}) else '{}'::jsonb end`,
    )
    .join(' || ');
}
