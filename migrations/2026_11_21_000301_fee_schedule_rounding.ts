import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code.
// Contracts state how the percentage is rounded to the cent; some round half up, some truncate.

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `alter table fee_schedule add column rounding text not null default 'half_up' check (rounding in ('half_up','floor'))`,
    )
    .execute(db);
  await sql
    .raw(
      `comment on column fee_schedule.rounding is 'How the percentage part is rounded to the cent: half_up (0.5 cent and more rounds up) or floor (truncated). Amounts are never negative.'`,
    )
    .execute(db);
  await sql.raw(`grant select on fee_schedule to recon_analyst`).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(`alter table fee_schedule drop column rounding`).execute(db);
}
