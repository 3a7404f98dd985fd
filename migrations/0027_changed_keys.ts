import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * A re-run after a change costs what the change touches (issue 30, section 1; docs/architecture.md).
 *
 * `recon_work.changed_keys`: the keys that each write to a table matching reads changed, noted by
 * statement triggers with transition tables inside the writer's own transaction, with the writer's
 * transaction id, one row per statement with an array of keys of each kind: provider transaction
 * ids, merchant transaction ids, return transaction ids. `whole` says that a write cannot be told by
 * keys (the fee schedule, a truncate), so the next run of every range matches in full. An update
 * notes the keys of the rows before and after.
 *
 * `recon_work.matched_days`: per account and Eastern business date, what its discrepancies were last
 * matched with: the fingerprint of the code and settings, whether the date was due (grace period) and
 * stuck (pending limit), and the snapshot of the run that matched it. The keys a later run must look
 * at again are those whose writer that snapshot did not see: `pg_visible_in_snapshot` is exact under
 * concurrent writers that commit in any order, where a greatest id or a time is not.
 *
 * `recon_work.unfound_resolutions`: what a run over changed keys cannot tell from a discrepancy's row,
 * whether one resolved as accepted, provider_error or written_off was found when last looked at.
 *
 * A person's action on a discrepancy (a resolution, a reopening) notes the discrepancy's keys too: the
 * lifecycle reads it (a fixed_in_ledger still found is reopened). A reconcile run's own writes are not
 * noted: it names its account in `recon.run_account` (reconcile/account-scope.ts).
 */

/** Per table: the key kind and column of each key its rows carry. */
const KEYS: Record<string, readonly (readonly [string, string])[]> = {
  provider_transactions: [
    ['transaction_id', 'transaction_id'],
    ['merchant_transaction_id', 'merchant_transaction_id'],
  ],
  legacy_transactions: [['transaction_id', 'transaction_id']],
  provider_returns: [
    ['return_transaction_id', 'return_transaction_id'],
    ['transaction_id', 'original_transaction_id'],
    ['merchant_transaction_id', 'merchant_transaction_id'],
  ],
  provider_adjustments: [['transaction_id', 'transaction_id']],
  merchant_ledger: [
    ['merchant_transaction_id', 'merchant_transaction_id'],
    ['merchant_transaction_id', 'original_merchant_transaction_id'],
    ['transaction_id', 'transaction_id'],
    ['return_transaction_id', 'transaction_id'],
  ],
  notifications: [
    ['transaction_id', 'transaction_id'],
    ['merchant_transaction_id', 'merchant_transaction_id'],
    ['return_transaction_id', 'transaction_id'],
  ],
  notification_quarantine: [['transaction_id', 'transaction_id']],
  status_lookups: [['transaction_id', 'transaction_id']],
  // A person's manual match (migration 0025): its provider and ledger items.
  manual_match_items: [
    ['transaction_id', `(case when side = 'provider' then item_id end)`],
    ['merchant_transaction_id', `(case when side = 'ledger' then item_id end)`],
  ],
};

/**
 * Tables whose writes no key can tell: any write makes the next run of every range a full one (the
 * fee schedule, a new version of an account's tolerances, an applied settings file).
 */
const WHOLE = ['fee_schedule', 'matching_tolerances', 'reconcile_settings'];

const DISCREPANCY_KEYS: readonly (readonly [string, string])[] = [
  ['transaction_id', 'transaction_id'],
  ['merchant_transaction_id', 'merchant_transaction_id'],
  ['return_transaction_id', 'return_transaction_id'],
];

/** The discrepancies of a statement whose resolution changed (a person resolved or reopened them). */
const ACTED = `(select n.* from new_rows n join old_rows o using (discrepancy_id)
  where (n.resolved_at, n.resolution) is distinct from (o.resolved_at, o.resolution)) acted`;

const KINDS = ['transaction_id', 'merchant_transaction_id', 'return_transaction_id'] as const;

/**
 * The insert of one statement's keys: one row, an array per kind (null when the table has none),
 * from the transition tables `rows`. One row per statement, not per key, so that a load of a million
 * rows adds one row here and the run that reads it, or deletes it, reads one.
 */
function insertKeys(keys: readonly (readonly [string, string])[], rows: readonly string[]): string {
  const arrays = KINDS.map((kind) => {
    const columns = keys.filter(([k]) => k === kind).map(([, column]) => column);
    if (columns.length === 0) return 'null::text[]';
    const selects = rows.flatMap((r) => columns.map((c) => `select ${c}::text as k from ${r}`));
    return `(select array_agg(k) from (${selects.join(' union all ')}) x where k is not null)`;
  });
  return `insert into recon_work.changed_keys (transaction_ids, merchant_transaction_ids, return_transaction_ids)
    select * from (select ${arrays.join(', ')}) a (t, m, r)
    where t is not null or m is not null or r is not null`;
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table recon_work.changed_keys (
    change_xid xid8 not null default pg_current_xact_id(),
    transaction_ids text[],
    merchant_transaction_ids text[],
    return_transaction_ids text[],
    whole boolean not null default false
  )`.execute(db);
  await sql`comment on table recon_work.changed_keys is 'The keys each statement that wrote a table matching reads changed (statement triggers, one row per statement), with the writer''s transaction id; whole: a write no key can tell. A reconcile run looks again at the keys whose writer the snapshot of its dates'' last matching did not see (reconcile/incremental.ts).'`.execute(
    db,
  );
  await sql`create table recon_work.matched_days (
    account text not null,
    business_date date not null,
    fingerprint text not null,
    due boolean not null,
    stuck boolean not null,
    seen pg_snapshot not null,
    run_id bigint not null,
    matched_at timestamptz not null default now(),
    primary key (account, business_date)
  )`.execute(db);
  await sql`comment on table recon_work.matched_days is 'Per account and Eastern business date: the fingerprint of the code and settings its discrepancies were last matched with, whether the date was due and stuck then, and the snapshot of that run (which writes it had seen).'`.execute(
    db,
  );

  await sql`comment on column public.discrepancies.last_seen_at is 'When a run last looked at it and found it (UTC): a run over changed keys looks only at the rows they reach (docs/operations.md).'`.execute(
    db,
  );
  await sql`create table recon_work.unfound_resolutions (
    discrepancy_id bigint primary key references public.discrepancies on delete cascade
  )`.execute(db);
  await sql`comment on table recon_work.unfound_resolutions is 'Discrepancies resolved as accepted, provider_error or written_off that the last run looking at them did not find: a run over changed keys counts the others of its range as found.'`.execute(
    db,
  );

  for (const [table, keys] of Object.entries(KEYS)) {
    // One function per table and event: a trigger with transition tables has one event.
    for (const [event, rows] of [
      ['insert', 'new_rows'],
      ['delete', 'old_rows'],
      ['update', 'new_rows'],
    ] as const) {
      const fn = `recon_work.note_${table}_${event}`;
      const insert = insertKeys(keys, event === 'update' ? ['new_rows', 'old_rows'] : [rows]);
      await sql
        .raw(
          `create function ${fn}() returns trigger language plpgsql security definer
            set search_path = pg_catalog, recon_work as $$
          begin
            ${insert};
            return null;
          end $$`,
        )
        .execute(db);
      const referencing =
        event === 'insert'
          ? 'new table as new_rows'
          : event === 'delete'
            ? 'old table as old_rows'
            : 'old table as old_rows new table as new_rows';
      await sql
        .raw(
          `create trigger ${table}_changed_keys_${event} after ${event} on public.${table}
            referencing ${referencing} for each statement execute function ${fn}()`,
        )
        .execute(db);
    }
  }

  await sql`create function recon_work.note_all_changed() returns trigger language plpgsql security definer
    set search_path = pg_catalog, recon_work as $$
    begin
      insert into recon_work.changed_keys (whole) values (true);
      return null;
    end $$`.execute(db);
  for (const table of [...Object.keys(KEYS), ...WHOLE]) {
    const events = WHOLE.includes(table) ? 'insert or update or delete or truncate' : 'truncate';
    await sql
      .raw(
        `create trigger ${table}_changed_all after ${events} on public.${table}
          for each statement execute function recon_work.note_all_changed()`,
      )
      .execute(db);
  }

  // A person's resolution or reopening; a reconcile run's own updates name its account and are left out.
  await sql
    .raw(
      `create function recon_work.note_discrepancy_action() returns trigger language plpgsql security definer
        set search_path = pg_catalog, recon_work as $$
      begin
        if coalesce(current_setting('recon.run_account', true), '') <> '' then return null; end if;
        ${insertKeys(DISCREPANCY_KEYS, [ACTED])};
        return null;
      end $$`,
    )
    .execute(db);
  await sql`create trigger discrepancies_changed_keys_update after update on public.discrepancies
    referencing old table as old_rows new table as new_rows
    for each statement execute function recon_work.note_discrepancy_action()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`comment on column public.discrepancies.last_seen_at is 'When a run last found it (UTC).'`.execute(
    db,
  );
  await sql`drop trigger discrepancies_changed_keys_update on public.discrepancies`.execute(db);
  await sql`drop function recon_work.note_discrepancy_action()`.execute(db);
  for (const table of [...Object.keys(KEYS), ...WHOLE])
    await sql.raw(`drop trigger ${table}_changed_all on public.${table}`).execute(db);
  await sql`drop function recon_work.note_all_changed()`.execute(db);
  for (const table of Object.keys(KEYS)) {
    for (const event of ['insert', 'delete', 'update']) {
      await sql.raw(`drop trigger ${table}_changed_keys_${event} on public.${table}`).execute(db);
      await sql.raw(`drop function recon_work.note_${table}_${event}()`).execute(db);
    }
  }
  await sql`drop table recon_work.unfound_resolutions, recon_work.matched_days, recon_work.changed_keys`.execute(
    db,
  );
}
