/**
 * The stored near-miss candidates of one discrepancy (reconcile/candidates/find-candidates.ts), as
 * the workbench, the API and `recon matches candidates` show them, within the caller's accounts.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { scopeCondition, type AccountScope } from '../discrepancies/filter.ts';
import { DiscrepancyNotFound } from '../discrepancies/row.ts';

export interface CandidateCheck {
  readonly check: 'amount' | 'business_date' | 'merchant_user' | 'id';
  readonly passed: boolean;
  readonly detail: string;
}

export interface Candidate {
  /** provider: a provider transaction (id is its transaction_id); ledger: a ledger entry (its merchant_transaction_id). */
  readonly side: 'provider' | 'ledger';
  readonly id: string;
  readonly rank: number;
  /** For ordering only. */
  readonly score: number;
  readonly amount_cents: number;
  readonly currency: string;
  readonly business_date: string;
  readonly merchant_transaction_id: string | null;
  /** The candidate's own open missing_* discrepancy. */
  readonly discrepancy_id: number | null;
  readonly checks: readonly CandidateCheck[];
}

/**
 * The candidates of discrepancy `id`, best first (none for a discrepancy that is not an open missing
 * item, or whose run found none). Throws DiscrepancyNotFound outside the scope.
 */
export async function discrepancyCandidates(
  db: Db,
  id: number,
  accounts: AccountScope | undefined,
): Promise<{ account: string; candidates: Candidate[] }> {
  const d = await sql<{ account: string }>`select account from discrepancies
    where discrepancy_id = ${id} and ${scopeCondition(accounts)}`.execute(db);
  if (!d.rows[0]) throw new DiscrepancyNotFound(id);
  const r = await sql<Candidate>`
    select c.side, c.candidate_id as id, c.rank, c.score, c.amount_cents::text as amount_cents,
      d.currency::text as currency, c.candidate_business_date::text as business_date, c.merchant_transaction_id,
      c.candidate_discrepancy_id as discrepancy_id, c.checks
    from match_candidates c join discrepancies d using (discrepancy_id)
    where c.discrepancy_id = ${id} and d.resolved_at is null
    order by c.rank`.execute(db);
  return {
    account: d.rows[0].account,
    candidates: r.rows.map((c) => ({
      ...c,
      amount_cents: Number(c.amount_cents),
      discrepancy_id: c.discrepancy_id === null ? null : Number(c.discrepancy_id),
    })),
  };
}
