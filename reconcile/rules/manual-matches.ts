/**
 * What matching reads of manual matches (migration 0025, reconcile/manual-matches/): the one place
 * the rules learn that a person paired a provider transaction with ledger entries. An item of a match
 * that holds (not undone) is matched for every rule: a provider transaction in one claims no ledger
 * entry by its key and is not missing in the ledger; a ledger entry in one is claimed by no provider
 * row by its key and is not missing at the provider. Every change of the items is a change of the
 * data for the run's reuse and scope (their statement trigger notes it in recon_work.data_changes).
 */

/** The active manual match item of `side` whose id is `idExpr`, joined as `alias` (left join). */
export function manualItemJoin(alias: string, side: 'provider' | 'ledger', idExpr: string): string {
  return `left join manual_match_items ${alias} on ${alias}.side = '${side}' and ${alias}.item_id = ${idExpr}
    and ${alias}.undone_at is null`;
}

/** `idExpr` is an item of a manual match that holds, on `side`. */
export function manuallyMatched(side: 'provider' | 'ledger', idExpr: string): string {
  return `exists (select 1 from manual_match_items mm where mm.side = '${side}' and mm.item_id = ${idExpr}
    and mm.undone_at is null)`;
}

/**
 * The ids of the items of `side` of the manual matches that hold, each once: joined by id, a set
 * hashed once instead of a probe per row where a statement reads many rows.
 */
export function manuallyMatchedIds(side: 'provider' | 'ledger'): string {
  return `(select distinct item_id from manual_match_items where side = '${side}' and undone_at is null)`;
}
