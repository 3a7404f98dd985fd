import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * Three of discrepancies' secondary indexes over every row become one (issue 30, section 3's rule
 * applied to the tables a run writes; docs/architecture.md, "Indexes of the discrepancies", shows each
 * reader's plan before and after). Every discrepancy a run opens was written into each of them:
 *
 * - discrepancies_rule_idx (rule): read only by a run over changed keys' loose scan of the rules the
 *   warehouse names (reconcile/rules/looked-at.ts), which a rule-led index still serves;
 * - discrepancies_kind_idx (kind, business_date): no reader asks for a kind over every status (the
 *   worklist's kind filter reads discrepancies_worklist_kind_idx); the readers by date used it by
 *   skipping over the kinds;
 * - discrepancies_open_idx (business_date) of the unresolved: the lifecycle's resolution of the
 *   range's unresolved discrepancies that no rule found (reconcile/apply-findings.ts) and the
 *   overview's open ones per day, which read a range of days.
 *
 * discrepancies_rule_day_idx (rule, business_date) serves them all: the loose scan by its first
 * column, a day's discrepancies of some rules (the day-anchored rules, the roll-forward's) by both,
 * and a day or a range of days of every rule by skipping over the rules (PostgreSQL 18's skip scan),
 * a few descents per rule the warehouse names.
 */

const DROPPED: Record<string, string> = {
  discrepancies_rule_idx: 'create index discrepancies_rule_idx on discrepancies (rule)',
  discrepancies_kind_idx: 'create index discrepancies_kind_idx on discrepancies (kind, business_date)',
  discrepancies_open_idx:
    'create index discrepancies_open_idx on discrepancies (business_date) where resolved_at is null',
};

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw('create index discrepancies_rule_day_idx on discrepancies (rule, business_date)').execute(db);
  for (const name of Object.keys(DROPPED)) await sql.raw(`drop index ${name}`).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const create of Object.values(DROPPED)) await sql.raw(create).execute(db);
  await sql.raw('drop index discrepancies_rule_day_idx').execute(db);
}
