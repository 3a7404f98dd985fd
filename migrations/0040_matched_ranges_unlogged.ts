import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * The stored matchings a run reuses (migration 0013: recon_work.matched_ranges and
 * matched_range_findings) become UNLOGGED, and the findings no longer reference their range by a
 * foreign key (issue 30, section 2; docs/architecture.md, "Reusing the last matching").
 *
 * They are a cache: a run of the same range, with nothing changed since, takes its findings from there
 * instead of matching again, and a run that finds no stored matching matches. So the crash that
 * empties UNLOGGED tables costs one run its reuse, never a result; both tables are emptied together.
 * What a first run paid for them at 1,000,000 rows: its 39,667 findings written to the WAL and one
 * foreign-key check each (a lock of the range's row), 0.38 s of its statements on a quiet machine,
 * about three times what the same insert costs UNLOGGED and unchecked (docs/benchmark-record.md
 * §2). The cascade the key gave is done by reconcile/matching-reuse.ts, the one writer of both
 * tables: it deletes a range's findings with the range.
 */

const FINDINGS = 'recon_work.matched_range_findings';
const RANGES = 'recon_work.matched_ranges';

export async function up(db: Kysely<any>): Promise<void> {
  const fk = await sql<{ conname: string }>`select conname from pg_constraint
    where conrelid = ${FINDINGS}::regclass and contype = 'f'`.execute(db);
  for (const { conname } of fk.rows)
    await sql.raw(`alter table ${FINDINGS} drop constraint ${JSON.stringify(conname)}`).execute(db);
  await sql.raw(`alter table ${FINDINGS} set unlogged`).execute(db);
  await sql.raw(`alter table ${RANGES} set unlogged`).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(`alter table ${RANGES} set logged`).execute(db);
  await sql.raw(`alter table ${FINDINGS} set logged`).execute(db);
  await sql
    .raw(
      `delete from ${FINDINGS} f where not exists (select 1 from ${RANGES} r
        where (r.account, r.range_from, r.range_to) = (f.account, f.range_from, f.range_to))`,
    )
    .execute(db);
  await sql
    .raw(
      `alter table ${FINDINGS} add foreign key (account, range_from, range_to) references ${RANGES} on delete cascade`,
    )
    .execute(db);
}
