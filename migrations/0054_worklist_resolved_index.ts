import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * discrepancies_worklist_all_idx (the worklist order over every discrepancy) becomes
 * discrepancies_worklist_resolved_idx, the same order over the resolved ones only (issue 30, section
 * 2; docs/architecture.md, "Indexes of the discrepancies"). With discrepancies_worklist_idx (the
 * unresolved ones) each discrepancy is in one of the two, and the worklist of every status reads both
 * from its cursor and merges them (reconcile/discrepancies/read.ts), a page at a time as before.
 *
 * Every discrepancy a run opens is unresolved: it was written into both the unresolved index and the
 * index of every row, and is now written into the first alone (a first run at 1,000,000 rows opens
 * 39,667, one index entry fewer each). A discrepancy resolved later is written into the resolved
 * index instead of the index of every row: its update is not a heap-only one either way, resolved_at
 * being in the partial indexes' predicates. The resolved ones are read in the worklist order by the
 * worklist with status=resolved, which read the index of every row past the unresolved ones.
 */

const WORKLIST = `coalesce(currency, ''), (-stake_cents), coalesce(business_date, 'infinity'::date), discrepancy_id`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `create index discrepancies_worklist_resolved_idx on discrepancies (${WORKLIST}) where resolved_at is not null`,
    )
    .execute(db);
  await sql.raw('drop index discrepancies_worklist_all_idx').execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(`create index discrepancies_worklist_all_idx on discrepancies (${WORKLIST})`).execute(db);
  await sql.raw('drop index discrepancies_worklist_resolved_idx').execute(db);
}
