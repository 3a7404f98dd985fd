/** Manual matches as `recon matches list`, the API and the workbench list them, newest first. */
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { scopeCondition, type AccountScope } from '../discrepancies/filter.ts';

export interface ManualMatchRow {
  readonly match_id: number;
  readonly account: string;
  readonly currency: string;
  readonly provider_transaction_ids: string[];
  readonly ledger_merchant_transaction_ids: string[];
  readonly provider_amount_cents: number;
  readonly ledger_amount_cents: number;
  readonly difference_cents: number;
  readonly written_off_cents: number;
  readonly note: string;
  readonly matched_by: string;
  readonly matched_at: string;
  readonly origin: string;
  readonly undone_by: string | null;
  readonly undone_at: string | null;
  readonly undo_note: string | null;
}

/** The matches of the caller's accounts (and of `account` when given), newest first; undone ones too unless `active`. */
export async function listManualMatches(
  db: Db,
  q: { accounts?: AccountScope; account?: string; active?: boolean; limit?: number; ids?: readonly string[] },
): Promise<ManualMatchRow[]> {
  const r = await sql<ManualMatchRow>`
    select m.match_id::int as match_id, m.account, m.currency::text as currency,
      coalesce((select array_agg(i.item_id order by i.item_id) from manual_match_items i
        where i.match_id = m.match_id and i.side = 'provider'), '{}') as provider_transaction_ids,
      coalesce((select array_agg(i.item_id order by i.item_id) from manual_match_items i
        where i.match_id = m.match_id and i.side = 'ledger'), '{}') as ledger_merchant_transaction_ids,
      m.provider_amount_cents::text as provider_amount_cents, m.ledger_amount_cents::text as ledger_amount_cents,
      m.difference_cents::text as difference_cents, m.written_off_cents::text as written_off_cents,
      m.note, m.matched_by, m.matched_at, m.origin, m.undone_by, m.undone_at, m.undo_note
    from manual_matches m
    where ${scopeCondition(q.accounts)} and ${q.account === undefined ? sql`true` : sql`m.account = ${q.account}`}
      and ${q.active ? sql`m.undone_at is null` : sql`true`}
      and ${q.ids === undefined ? sql`true` : sql`exists (select 1 from manual_match_items i where i.match_id = m.match_id and i.item_id = any(${[...q.ids]}::text[]))`}
    order by m.match_id desc limit ${q.limit ?? 100}`.execute(db);
  return r.rows.map((m) => ({
    ...m,
    provider_amount_cents: Number(m.provider_amount_cents),
    ledger_amount_cents: Number(m.ledger_amount_cents),
    difference_cents: Number(m.difference_cents),
    written_off_cents: Number(m.written_off_cents),
    matched_at: new Date(m.matched_at).toISOString(),
    undone_at: m.undone_at === null ? null : new Date(m.undone_at).toISOString(),
  }));
}
