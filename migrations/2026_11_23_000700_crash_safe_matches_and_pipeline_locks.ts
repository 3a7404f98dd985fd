import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code.
//
// 1. The match tables become logged again. Unlogged, a crash of the server emptied them and the views
//    analysts read (notification_delivery, returns_with_originals) silently lost their matches until
//    the next reconcile run of each range. Measured cost of logging (bench/matching.ts, README
//    "Speed" under Reconciliation) is small next to that.
// 2. Schema recon_work: the pipeline's private objects, on which no analyst role has USAGE.
//    - reconcile_lock: reconcile runs serialise on a lock of this table. An advisory lock could be
//      taken by any session (an analyst holding pg_advisory_lock(28794560) stalled every run).
//    - loads' staging tables are created here: in public, default privileges made them readable by
//      recon_analyst, whose open transaction then blocked the DROP at the end of a load.
// 3. loads.status 'abandoned' and the owning session (owner_pid, owner_backend_start): a load whose
//    process or server died stays 'running' no longer; the next load or reconcile run marks it.

const MATCH_TABLES = ['transaction_matches', 'return_matches', 'notification_matches', 'source_matches'];

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of MATCH_TABLES) await sql.raw(`alter table ${table} set logged`).execute(db);
  await sql
    .raw(
      `comment on table notification_matches is ${literal(
        'Notifications matched to the provider transaction or return they announce. UNIQUE on each side: one notification per provider row (the latest distinct body), one provider row per notification.',
      )}`,
    )
    .execute(db);
  await sql
    .raw(
      `comment on table transaction_matches is ${literal(
        'Provider transactions matched to merchant ledger entries by merchant transaction id. UNIQUE on each side: a provider transaction claims at most one ledger entry and a ledger entry is claimed at most once, so duplicates can never both match.',
      )}`,
    )
    .execute(db);

  await sql.raw(`create schema if not exists recon_work`).execute(db);
  await sql.raw(`revoke all on schema recon_work from public`).execute(db);
  await sql
    .raw(
      `comment on schema recon_work is ${literal(
        "The pipeline's private objects (locks, staging tables of running loads): no analyst role has USAGE on it, so no analyst session can lock them.",
      )}`,
    )
    .execute(db);
  await sql
    .raw(`create table recon_work.reconcile_lock (singleton boolean primary key default true)`)
    .execute(db);
  await sql
    .raw(
      `comment on table recon_work.reconcile_lock is ${literal(
        'Empty; a reconcile run locks it (EXCLUSIVE, for its transaction) so that runs queue. Only the pipeline role can reach it.',
      )}`,
    )
    .execute(db);

  await sql.raw(`alter table loads drop constraint if exists loads_status_check`).execute(db);
  await sql
    .raw(
      `alter table loads add constraint loads_status_check check (status in ('running','committed','failed','abandoned')),
         add column owner_pid integer,
         add column owner_backend_start timestamptz`,
    )
    .execute(db);
  await sql
    .raw(
      `comment on column loads.status is ${literal(
        'running while loading; committed when its rows are in the warehouse; failed when nothing was kept; abandoned when its process or the database died while it ran (nothing was kept: re-run the load).',
      )}`,
    )
    .execute(db);
  await sql
    .raw(
      `comment on column loads.owner_pid is ${literal(
        'Backend pid of the session that holds the load open while it runs; a running load whose session is gone is marked abandoned.',
      )}`,
    )
    .execute(db);
  await sql
    .raw(
      `comment on column loads.owner_backend_start is ${literal(
        'When that session started (UTC): with owner_pid, identifies it even if the pid is reused.',
      )}`,
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(`update loads set status = 'failed' where status = 'abandoned'`).execute(db);
  await sql
    .raw(
      `alter table loads drop constraint if exists loads_status_check,
         drop column if exists owner_pid, drop column if exists owner_backend_start`,
    )
    .execute(db);
  await sql
    .raw(
      `alter table loads add constraint loads_status_check check (status in ('running','committed','failed'))`,
    )
    .execute(db);
  await sql.raw(`drop schema if exists recon_work cascade`).execute(db);
  for (const table of MATCH_TABLES) await sql.raw(`alter table ${table} set unlogged`).execute(db);
}
