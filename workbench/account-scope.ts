/**
 * The accounts a request may see and act on, derived from its principal in this one place: a user or
 * token limited to accounts (`recon users add NAME --account A`, `recon tokens create --account A`)
 * gets that list, anyone else every account. The discrepancy module applies the scope in every
 * read and action (reconcile/discrepancies/filter.ts: a discrepancy outside it does not exist, so its
 * id answers 404); runs, loads and coverage apply it in workbench/queries/operations.ts. No request
 * parameter can widen it: `account=` only narrows within it.
 */
import type { FastifyRequest } from 'fastify';
import { isAccountName } from '../domain/account-name.ts';
import {
  parseFilter,
  type AccountScope,
  type DiscrepancyFilter,
  type StatusFilter,
} from '../reconcile/discrepancies/filter.ts';

/** The scope of the request's principal; none at all without one. */
export function accountScope(request: FastifyRequest): AccountScope {
  const principal = request.principal;
  if (!principal) return [];
  // Stored names are checked by the tables' constraint; the guard only types them (and would narrow).
  return principal.accounts?.filter(isAccountName) ?? 'all';
}

/** Whether the request's principal sees every account (what the totals of /metrics need). */
export function seesEveryAccount(request: FastifyRequest): boolean {
  return accountScope(request) === 'all';
}

/** The worklist filter of query parameters, within the request's scope. */
export function scopedFilter(
  request: FastifyRequest,
  query: Record<string, unknown>,
): DiscrepancyFilter & { status: StatusFilter } {
  return { ...parseFilter(query), accounts: accountScope(request) };
}
