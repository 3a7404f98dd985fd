import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * Following every non-final transaction to its end, and time order (docs/operations.md "What the
 * nightly run does", docs/finance.md "Pending transactions and notifications"):
 *
 * - `loads.source` gains `status-lookup`: the nightly follow-up writes what the status endpoint says
 *   into provider_transactions as a load of its own, so that every change keeps its lineage and its
 *   row_history entry.
 * - `row_history.refused`: a load that would have moved a final status back to PENDING (an older file
 *   imported after a newer one) is refused, and the version it carried is kept here, with its load.
 * - `notification_quarantine.transaction_id`, `replayed_at`, `notification_id`: a quarantined delivery
 *   names the transaction its body speaks of (read from the raw body even when it is not valid JSON),
 *   so that a missing notification can point at it, and `recon notifications replay` records what
 *   became of it.
 */

/** The transactionId member of a notification body, as text: the same expression the receiver uses. */
const TRANSACTION_ID_IN_BODY = `substring(body from '"transactionId"\\s*:\\s*"([^"\\\\]{1,64})"')`;

const SOURCES_BEFORE = `'report-transactions','report-returns','legacy-transactions','legacy-returns','legacy-adjustments','ledger'`;

interface AddedColumn {
  readonly table: string;
  readonly column: string;
  readonly type: string;
  readonly comment: string;
}

const COLUMNS: readonly AddedColumn[] = [
  {
    table: 'row_history',
    column: 'refused',
    type: 'boolean not null default false',
    comment:
      'True when the load was refused this change: a final status (SUCCESSFUL, REJECTED, FAILED, RETURNED) never goes back to PENDING through a load, such as an older file imported after a newer one. previous then holds the version the refused load carried, and the row kept its values.',
  },
  {
    table: 'notification_quarantine',
    column: 'transaction_id',
    type: 'text',
    comment:
      'The transactionId the quarantined body names, read from the raw body even when it is not valid JSON; null when it names none.',
  },
  {
    table: 'notification_quarantine',
    column: 'replayed_at',
    type: 'timestamptz',
    comment:
      'When recon notifications replay took this delivery into notifications (UTC); null while it is still refused.',
  },
  {
    table: 'notification_quarantine',
    column: 'notification_id',
    type: 'bigint',
    comment: 'The notification the replay stored (or found already stored) for this delivery.',
  },
];

const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** Adds `c` to its table, to the analysts' column grant and to its `_redacted` view. */
async function addColumn(db: Kysely<any>, c: AddedColumn): Promise<void> {
  await sql.raw(`alter table ${c.table} add column ${c.column} ${c.type}`).execute(db);
  await sql.raw(`comment on column ${c.table}.${c.column} is ${lit(c.comment)}`).execute(db);
  await sql`do $$ begin
      if exists (select from pg_roles where rolname = 'recon_analyst')
        and has_any_column_privilege('recon_analyst', ${sql.lit(c.table)}, 'select') then
        execute format('grant select (%I) on %I to recon_analyst', ${sql.lit(c.column)}, ${sql.lit(c.table)});
      end if;
    end $$`.execute(db);
  const view = `${c.table}_redacted`;
  const r = await sql<{ def: string | null }>`select pg_get_viewdef(to_regclass(${view})) as def`.execute(db);
  const def = r.rows[0]?.def?.trim().replace(/;$/, '');
  if (!def) return;
  const from = def.search(/\n\s*FROM /);
  if (from < 0) throw new Error(`view ${view} is not a plain SELECT ... FROM`);
  const query = `${def.slice(0, from)}, t.${c.column}${def.slice(from)}`;
  await sql.raw(`create or replace view ${view} with (security_barrier) as ${query}`).execute(db);
  await sql.raw(`comment on column ${view}.${c.column} is ${lit(c.comment)}`).execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `alter table loads drop constraint loads_source_check,
        add constraint loads_source_check check (source in (${SOURCES_BEFORE},'status-lookup'))`,
    )
    .execute(db);
  await sql
    .raw(
      `comment on column loads.source is 'What was loaded: a provider report source, the merchant ledger, or status-lookup (what the nightly follow-up learnt from the transaction status endpoint).'`,
    )
    .execute(db);
  for (const c of COLUMNS) await addColumn(db, c);
  await sql
    .raw(
      `update notification_quarantine set transaction_id = ${TRANSACTION_ID_IN_BODY} where body is not null`,
    )
    .execute(db);
  // A refused body is counted again per account, not across accounts: two accounts of one merchant
  // can be sent the same body, and each account's missing notification must find its own delivery.
  await sql.raw('drop index notification_quarantine_sha256_idx').execute(db);
  await sql
    .raw(
      'create unique index notification_quarantine_sha256_idx on notification_quarantine (account, body_sha256) nulls not distinct',
    )
    .execute(db);
  await sql
    .raw(
      'create index notification_quarantine_transaction_idx on notification_quarantine (account, transaction_id) where transaction_id is not null',
    )
    .execute(db);
  // Matching now reads the quarantine (a missing notification names its quarantined delivery): a
  // change there must end the reuse of a range's findings, as a change of any table matching reads.
  await sql
    .raw(
      `create trigger notification_quarantine_data_change after insert or update or delete or truncate
        on notification_quarantine for each statement execute function recon_work.note_data_change()`,
    )
    .execute(db);
  // The follow-up reads the non-final rows oldest first: a partial index keeps that small.
  await sql
    .raw(
      `create index provider_transactions_non_final_idx on provider_transactions (account, transaction_on)
        where status = 'PENDING'`,
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop trigger notification_quarantine_data_change on notification_quarantine').execute(db);
  await sql.raw('drop index provider_transactions_non_final_idx').execute(db);
  await sql.raw('drop index notification_quarantine_transaction_idx').execute(db);
  await sql.raw('drop index notification_quarantine_sha256_idx').execute(db);
  await sql
    .raw('create unique index notification_quarantine_sha256_idx on notification_quarantine (body_sha256)')
    .execute(db);
  for (const c of [...COLUMNS].reverse()) {
    const view = `${c.table}_redacted`;
    const r = await sql<{ def: string | null }>`select pg_get_viewdef(to_regclass(${view})) as def`.execute(
      db,
    );
    const def = r.rows[0]?.def?.trim().replace(/;$/, '');
    if (def) {
      // A view's column cannot be dropped by create or replace: rebuild it without the column (the
      // server may print it with or without the table's alias).
      const query = def.replace(new RegExp(`,\\s*(?:t\\.)?${c.column}(?=\\s*\\n\\s*FROM )`), '');
      await sql.raw(`drop view ${view}`).execute(db);
      await sql.raw(`create view ${view} with (security_barrier) as ${query}`).execute(db);
      await sql.raw('grant select on ' + view + ' to recon_analyst').execute(db);
    }
    await sql.raw(`alter table ${c.table} drop column ${c.column}`).execute(db);
  }
  await sql
    .raw(
      `delete from row_history where load_id in (select load_id from loads where source = 'status-lookup')`,
    )
    .execute(db);
  // loads rows are permanent (trigger loads_are_permanent, which fires for the statement even when it
  // deletes nothing); undoing this migration is the one place that removes the loads it introduced.
  await sql.raw('alter table loads disable trigger loads_are_permanent').execute(db);
  await sql.raw(`delete from loads where source = 'status-lookup'`).execute(db);
  await sql.raw('alter table loads enable trigger loads_are_permanent').execute(db);
  await sql
    .raw(
      `alter table loads drop constraint loads_source_check,
        add constraint loads_source_check check (source in (${SOURCES_BEFORE}))`,
    )
    .execute(db);
}
