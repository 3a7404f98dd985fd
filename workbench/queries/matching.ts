/** What the discrepancy page shows of candidates and manual matches (workbench/pages/candidates.ts). */
import type { Candidate } from '../../reconcile/candidates/read-candidates.ts';
import { discrepancyCandidates } from '../../reconcile/candidates/read-candidates.ts';
import type { DetailRow } from '../../reconcile/discrepancies/detail.ts';
import type { AccountScope } from '../../reconcile/discrepancies/filter.ts';
import { listManualMatches, type ManualMatchRow } from '../../reconcile/manual-matches/read.ts';
import type { WorkbenchContext } from '../context.ts';

/** The discrepancy's candidates and the manual matches of its items (newest first, undone ones too). */
export async function matchingOf(
  ctx: WorkbenchContext,
  d: DetailRow,
  accounts: AccountScope,
): Promise<{ candidates: Candidate[]; matches: ManualMatchRow[] }> {
  const ids = [d.transaction_id, d.merchant_transaction_id].filter((x): x is string => typeof x === 'string');
  const [found, matches] = await Promise.all([
    discrepancyCandidates(ctx.db, d.id, accounts),
    ids.length === 0
      ? Promise.resolve([])
      : listManualMatches(ctx.db, { accounts, account: String(d.account), ids, limit: 20 }),
  ]);
  return { candidates: found.candidates, matches };
}
