/**
 * One discrepancy with its evidence: the provider rows of each source, the ledger entry, the
 * notification deliveries, the return and its original, the legacy row, and the loads they came
 * from; a field-level diff of expected against actual; the rule in plain words; the event timeline.
 * Personal data (raw lines, payloads, account tokens and labels, e-mail, bank accounts) is never
 * selected: the workbench shows the redacted form only.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { explainRule, type RuleExplanation } from '../rules/rules-in-words.ts';
import { scopeCondition, type AccountScope } from './filter.ts';
import { DiscrepancyNotFound, ROW_COLUMNS, type DiscrepancyRow } from './row.ts';

export interface DiffField {
  field: string;
  expected: unknown;
  actual: unknown;
  differs: boolean;
}

/** The discrepancy's row, with its id also as `id` (the workbench's name), its key and candidates. */
export type DetailRow = DiscrepancyRow & {
  id: number;
  discrepancy_key: string;
  candidates: unknown;
  resolved_by: string | null;
};

export interface DiscrepancyDetail {
  discrepancy: DetailRow;
  evidence: {
    provider: Record<string, unknown>[];
    ledger: Record<string, unknown>[];
    notifications: Record<string, unknown>[];
    returns: Record<string, unknown>[];
    legacy: Record<string, unknown>[];
    loads: Record<string, unknown>[];
  };
  diff: { expected_side: string; actual_side: string; fields: DiffField[] };
  rule: RuleExplanation;
  events: Record<string, unknown>[];
}

const PROVIDER_COLUMNS = sql`transaction_id, merchant_id, merchant_transaction_id, product, transaction_type,
  raw_transaction_type, status, raw_status, amount_cents, fee_cents, currency, transaction_at, transaction_on,
  error_code, error_message, notify_status, source, load_id, first_load_id, created_at, updated_at`;

function asObject(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Field-level diff: every field either side names, expected against actual. */
export function fieldDiff(expected: unknown, actual: unknown): DiffField[] {
  const e = asObject(expected);
  const a = asObject(actual);
  const fields = [...new Set([...Object.keys(e), ...Object.keys(a)])];
  return fields.map((field) => {
    const ev = e[field] ?? null;
    const av = a[field] ?? null;
    const onlyOneSide = !(field in e) || !(field in a);
    return {
      field,
      expected: ev,
      actual: av,
      differs: !onlyOneSide && JSON.stringify(ev) !== JSON.stringify(av),
    };
  });
}

/**
 * The discrepancy with everything the workbench and `recon discrepancies show` show about it.
 * @throws DiscrepancyNotFound when no discrepancy of the scope has this id.
 */
export async function discrepancyDetail(
  db: Db,
  id: number,
  accounts?: AccountScope,
): Promise<DiscrepancyDetail> {
  const d = (
    await sql<DetailRow>`select ${ROW_COLUMNS}, discrepancy_id as id, discrepancy_key, candidates, resolved_by
      from discrepancies where discrepancy_id = ${id} and ${scopeCondition(accounts)}`.execute(db)
  ).rows[0];
  if (!d) throw new DiscrepancyNotFound(id);
  const candidates = asObject(d.candidates);
  const txnIds = [
    ...new Set(
      [d.transaction_id, ...stringList(candidates.provider), ...stringList(candidates.original)].filter(
        (v): v is string => typeof v === 'string',
      ),
    ),
  ];
  const mtids = [
    ...new Set(
      [d.merchant_transaction_id, ...stringList(candidates.ledger)].filter(
        (v): v is string => typeof v === 'string',
      ),
    ),
  ];
  const returnId = typeof d.return_transaction_id === 'string' ? d.return_transaction_id : null;

  const [provider, ledger, notifications, returns, legacy, events] = await Promise.all([
    sql<Record<string, unknown>>`select ${PROVIDER_COLUMNS} from provider_transactions
      where transaction_id = any(${txnIds}::text[]) or merchant_transaction_id = any(${mtids}::text[])
      order by transaction_at nulls last, transaction_id limit 50`.execute(db),
    sql<
      Record<string, unknown>
    >`select merchant_transaction_id, transaction_type, amount_cents, currency, status,
        booked_at, transaction_id, original_merchant_transaction_id, product, fee_cents, description, load_id
      from merchant_ledger
      where merchant_transaction_id = any(${mtids}::text[]) or transaction_id = any(${txnIds}::text[])
        ${returnId ? sql`or transaction_id = ${returnId}` : sql``}
        or original_merchant_transaction_id = any(${mtids}::text[])
      order by booked_at limit 50`.execute(db),
    sql<Record<string, unknown>>`select notification_id, kind, transaction_id, merchant_transaction_id,
        transaction_type, status, raw_status, amount_cents, fee_cents, currency, error_code, return_code,
        raw_next_action_date, received_at, last_received_at, delivery_count, confirmed_at
      from notifications
      where transaction_id = any(${txnIds}::text[]) or merchant_transaction_id = any(${mtids}::text[])
        ${returnId ? sql`or transaction_id = ${returnId}` : sql``}
      order by received_at limit 50`.execute(db),
    sql<
      Record<string, unknown>
    >`select r.return_transaction_id, r.original_transaction_id, r.merchant_transaction_id,
        r.return_code, r.amount_cents, r.currency, r.returned_on, r.next_action_date as representment_date,
        r.settlement_code, r.source, r.load_id, r.first_load_id,
        o.transaction_type as original_transaction_type, o.amount_cents as original_amount_cents,
        o.currency as original_currency, o.status as original_status, o.transaction_at as original_transaction_at,
        o.merchant_transaction_id as original_merchant_transaction_id
      from provider_returns r left join provider_transactions o on o.transaction_id = r.original_transaction_id
      where ${returnId ? sql`r.return_transaction_id = ${returnId} or ` : sql``}
        r.original_transaction_id = any(${txnIds}::text[])
      order by r.returned_on limit 50`.execute(db),
    sql<
      Record<string, unknown>
    >`select transaction_id, transaction_on, raw_transaction_type, merchant_transaction_id,
        amount_cents, currency, status, raw_status, fee_cents, error_code, raw_notify_status, transaction_at,
        return_code, returned_on, completed_on, payment_type, query_type, load_id, first_load_id, updated_at
      from legacy_transactions where transaction_id = any(${[...txnIds, ...(returnId ? [returnId] : [])]}::text[])
      limit 50`.execute(db),
    sql<Record<string, unknown>>`select event_id, event, actor, details, at from discrepancy_events
      where discrepancy_id = ${id} order by at, event_id`.execute(db),
  ]);

  const loadIds = new Set<number>();
  for (const row of [...provider.rows, ...ledger.rows, ...returns.rows, ...legacy.rows]) {
    for (const k of ['load_id', 'first_load_id'])
      if (typeof row[k] === 'number') loadIds.add(row[k] as number);
  }
  const loads = await sql<
    Record<string, unknown>
  >`select load_id, source, environment, origin, format, query_type,
      file_name, file_sha256, window_start, window_end, status, rows_read, rows_loaded, rows_rejected, workflow_id,
      started_at, finished_at
    from loads where load_id = any(${[...loadIds]}::bigint[]) order by load_id`.execute(db);

  const rule = explainRule(String(d.kind), String(d.rule));
  return {
    discrepancy: d,
    evidence: {
      provider: provider.rows,
      ledger: ledger.rows,
      notifications: notifications.rows,
      returns: returns.rows,
      legacy: legacy.rows,
      loads: loads.rows,
    },
    diff: { expected_side: rule.expected, actual_side: rule.actual, fields: fieldDiff(d.expected, d.actual) },
    rule,
    events: events.rows,
  };
}

/** The terminal's view of a detail: the discrepancy's own provider row, return and ledger entry. */
export interface TerminalDetail {
  discrepancy: DetailRow;
  evidence: {
    providerTransaction: Record<string, unknown> | null;
    providerReturn: Record<string, unknown> | null;
    ledgerEntry: Record<string, unknown> | null;
    notifications: Record<string, unknown>[];
  };
  events: Record<string, unknown>[];
}

/** The rows of a detail's evidence that are the discrepancy's own (not candidates). */
export function terminalDetail(detail: DiscrepancyDetail): TerminalDetail {
  const d = detail.discrepancy;
  const own = (rows: Record<string, unknown>[], key: string, value: string | null) =>
    value === null ? null : (rows.find((r) => r[key] === value) ?? null);
  const providerTransaction = own(detail.evidence.provider, 'transaction_id', d.transaction_id);
  const mtid =
    d.merchant_transaction_id ??
    (typeof providerTransaction?.merchant_transaction_id === 'string'
      ? providerTransaction.merchant_transaction_id
      : null);
  return {
    discrepancy: d,
    evidence: {
      providerTransaction,
      providerReturn: own(detail.evidence.returns, 'return_transaction_id', d.return_transaction_id),
      ledgerEntry: own(detail.evidence.ledger, 'merchant_transaction_id', mtid),
      notifications: detail.evidence.notifications,
    },
    events: detail.events,
  };
}
