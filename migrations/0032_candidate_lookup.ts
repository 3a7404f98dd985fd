import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * match_candidates_candidate_idx: the discrepancies that have a given discrepancy's item among their
 * near-miss candidates. A run over changed keys (reconcile/candidates/changed-candidates.ts) searches
 * candidates again only for the discrepancies whose candidates a changed item can touch, and those
 * include every discrepancy that had it as a candidate: one index probe per changed item instead of
 * reading every candidate of the range.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index match_candidates_candidate_idx on match_candidates (candidate_discrepancy_id)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index match_candidates_candidate_idx`.execute(db);
}
