import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * The workbench (recon serve): its users, API tokens, sessions and sign-in throttle; who a
 * discrepancy is assigned to and how a person resolved it; who did each event; and the indexes of
 * the worklist's keyed paging.
 */

const ROLE = `check (role in ('viewer','operator','admin'))`;

const tables: { name: string; ddl: string; comment: string; columns: Record<string, string> }[] = [
  {
    name: 'workbench_users',
    ddl: `create table workbench_users (
      username text primary key check (username ~ '^[a-z0-9][a-z0-9._@-]{0,63}$'),
      role text not null ${ROLE},
      password_hash text not null,
      created_at timestamptz not null default now(),
      disabled_at timestamptz
    )`,
    comment:
      '[pipeline only] People who sign in to the workbench (recon users add / disable). Never readable by recon_analyst.',
    columns: {
      username: 'Sign-in name, lower case.',
      role: 'viewer (reads), operator (acts on discrepancies) or admin (users and tokens too).',
      password_hash:
        'scrypt hash of the password with its salt and cost (scrypt$N$r$p$salt$hash); never the password.',
      created_at: 'When the user was added (UTC).',
      disabled_at: 'When the user was disabled (UTC); a disabled user cannot sign in and loses its sessions.',
    },
  },
  {
    name: 'workbench_tokens',
    ddl: `create table workbench_tokens (
      token_id bigint generated always as identity primary key,
      name text not null,
      role text not null ${ROLE},
      token_sha256 char(64) not null unique check (token_sha256 ~ '^[0-9a-f]{64}$'),
      created_at timestamptz not null default now(),
      revoked_at timestamptz,
      last_used_at timestamptz
    )`,
    comment:
      '[pipeline only] API tokens for machines (recon tokens create / revoke), sent as Authorization: Bearer. Only the hash is stored.',
    columns: {
      token_id: 'Identifier, printed by recon tokens create and used by recon tokens revoke.',
      name: 'What the token is for; events it causes name it as token:NAME.',
      role: 'viewer, operator or admin.',
      token_sha256: 'SHA-256 of the token, hex; the token itself is printed once and never stored.',
      created_at: 'When it was created (UTC).',
      revoked_at: 'When it was revoked (UTC); a revoked token is refused.',
      last_used_at: 'When it last authenticated a request (UTC), at most once a minute.',
    },
  },
  {
    name: 'workbench_sessions',
    ddl: `create table workbench_sessions (
      session_sha256 char(64) primary key check (session_sha256 ~ '^[0-9a-f]{64}$'),
      username text not null references workbench_users (username),
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      last_seen_at timestamptz not null default now()
    )`,
    comment: '[pipeline only] Browser sessions of the workbench. Only the hash of the cookie is stored.',
    columns: {
      session_sha256: 'SHA-256 of the session cookie, hex.',
      username: 'Who signed in.',
      created_at: 'When (UTC).',
      expires_at:
        'After this instant the session is refused (idle expiry, moved on use; capped at an absolute lifetime).',
      last_seen_at: 'Last request of the session (UTC).',
    },
  },
  {
    name: 'workbench_sign_in_failures',
    ddl: `create table workbench_sign_in_failures (
      username text primary key,
      failures integer not null check (failures >= 0),
      first_failed_at timestamptz not null,
      locked_until timestamptz
    )`,
    comment:
      '[pipeline only] Failed sign-ins per user name, to throttle password guessing; cleared by a successful sign-in.',
    columns: {
      username: 'Name that was tried (it need not exist).',
      failures: 'Failures since first_failed_at.',
      first_failed_at: 'Start of the counting window (UTC).',
      locked_until: 'Sign-in refused for this name until then (UTC).',
    },
  },
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const t of tables) {
    await sql.raw(t.ddl).execute(db);
    await sql`comment on table ${sql.table(t.name)} is ${sql.lit(t.comment)}`.execute(db);
    for (const [column, comment] of Object.entries(t.columns)) {
      await sql`comment on column ${sql.ref(`${t.name}.${column}`)} is ${sql.lit(comment)}`.execute(db);
    }
    // Default privileges grant every new table to recon_analyst: hashes and sign-in data are not for it.
    await sql.raw(`revoke all on ${t.name} from recon_analyst`).execute(db);
  }
  await sql`create index workbench_sessions_user_idx on workbench_sessions (username)`.execute(db);

  await sql`alter table discrepancies
    add column assignee text,
    add column resolution text check (resolution in ('accepted','fixed_in_ledger','provider_error')),
    add column resolved_by text,
    add column stake_cents bigint generated always as (
      case when kind in ('currency_mismatch','type_mismatch','status_mismatch')
        then abs(coalesce(expected_amount_cents, actual_amount_cents, 0))
        else abs(coalesce(difference_cents, expected_amount_cents, actual_amount_cents, 0)) end) stored`.execute(
    db,
  );
  const discrepancyComments: Record<string, string> = {
    assignee: 'Workbench user the discrepancy is assigned to.',
    resolution:
      'How a person resolved it: accepted, fixed_in_ledger (the next run verifies it and reopens it if still wrong) or provider_error; null when later data resolved it or it is unresolved.',
    resolved_by: 'Who resolved it (a workbench user or token:NAME); null when a run resolved it.',
    stake_cents:
      'Money at stake, in cents of currency, as the run summary counts it: the whole amount for currency, type and status mismatches, else the absolute difference, else the amount concerned, else 0. Orders the worklist.',
  };
  for (const [column, comment] of Object.entries(discrepancyComments)) {
    await sql`comment on column ${sql.ref(`discrepancies.${column}`)} is ${sql.lit(comment)}`.execute(db);
  }
  // The worklist's order (per currency, money at stake, age, id) as one index per status set, so a
  // page of any depth is an index range scan from the cursor: unresolved (the default) and all.
  await sql`create index discrepancies_worklist_idx on discrepancies
    (coalesce(currency, ''), (-stake_cents), coalesce(business_date, 'infinity'::date), discrepancy_id)
    where resolved_at is null`.execute(db);
  await sql`create index discrepancies_worklist_all_idx on discrepancies
    (coalesce(currency, ''), (-stake_cents), coalesce(business_date, 'infinity'::date), discrepancy_id)`.execute(
    db,
  );
  await sql`create index discrepancies_assignee_idx on discrepancies (assignee) where assignee is not null`.execute(
    db,
  );

  // Filtered by kind (the usual filter), a page is a range scan of this index from the cursor.
  await sql`create index discrepancies_worklist_kind_idx on discrepancies
    (kind, coalesce(currency, ''), (-stake_cents), coalesce(business_date, 'infinity'::date), discrepancy_id)
    where resolved_at is null`.execute(db);
  // The worklist's search also matches return transaction ids.
  await sql`create index discrepancies_return_idx on discrepancies (return_transaction_id)
    where return_transaction_id is not null`.execute(db);

  // Totals by kind and currency of a filter on status, kind, currency and business dates, without
  // reading the discrepancies: triggers append each change as signed deltas (insert-only, so runs
  // and people never wait on each other's totals rows); compact_discrepancy_totals() folds them at
  // the end of every reconcile run.
  await sql`create table discrepancy_totals (
      business_date date not null,
      kind text not null,
      currency char(3) not null,
      status text not null,
      count bigint not null,
      cents bigint not null
    )`.execute(db);
  await sql`comment on table discrepancy_totals is ${sql.lit(
    'Count and money at stake of discrepancies per business date, kind, currency and status, as signed deltas kept by statement triggers on discrepancies and folded by compact_discrepancy_totals(); the sum of the rows of a key is its total. Read by the workbench totals.',
  )}`.execute(db);
  const totalsComments: Record<string, string> = {
    business_date: "Eastern business date ('infinity' when the discrepancy has none).",
    kind: 'Discrepancy kind.',
    currency: "Currency ('' when the discrepancy has none).",
    status: 'open, acknowledged or resolved.',
    count: 'Change in the number of discrepancies of the key (signed).',
    cents: 'Change in their money at stake, in cents of currency (signed).',
  };
  for (const [column, comment] of Object.entries(totalsComments)) {
    await sql`comment on column ${sql.ref(`discrepancy_totals.${column}`)} is ${sql.lit(comment)}`.execute(
      db,
    );
  }
  await sql`create index discrepancy_totals_key_idx on discrepancy_totals (status, kind, currency, business_date)`.execute(
    db,
  );
  await sql`create function discrepancy_totals_apply() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into discrepancy_totals (business_date, kind, currency, status, count, cents)
        select coalesce(business_date, 'infinity'), kind, coalesce(currency, ''), status, count(*), sum(stake_cents)
        from new_rows group by 1, 2, 3, 4;
      else
        insert into discrepancy_totals (business_date, kind, currency, status, count, cents)
        select coalesce(business_date, 'infinity'), kind, coalesce(currency, ''), status, -count(*), -sum(stake_cents)
        from old_rows group by 1, 2, 3, 4;
      end if;
      return null;
    end $$`.execute(db);
  await sql`comment on function discrepancy_totals_apply() is ${sql.lit(
    'Appends what an INSERT or DELETE statement on discrepancies changed to discrepancy_totals (statement-level, transition tables).',
  )}`.execute(db);
  await sql`create function discrepancy_totals_change() returns trigger language plpgsql as $$
    begin
      insert into discrepancy_totals (business_date, kind, currency, status, count, cents) values
        (coalesce(old.business_date, 'infinity'), old.kind, coalesce(old.currency, ''), old.status, -1, -old.stake_cents),
        (coalesce(new.business_date, 'infinity'), new.kind, coalesce(new.currency, ''), new.status, 1, new.stake_cents);
      return null;
    end $$`.execute(db);
  await sql`comment on function discrepancy_totals_change() is ${sql.lit(
    'Appends the change of one updated discrepancy to discrepancy_totals, for rows whose totals key or money at stake changed.',
  )}`.execute(db);
  for (const [op, refs] of [
    ['insert', 'new table as new_rows'],
    ['delete', 'old table as old_rows'],
  ] as const) {
    await sql
      .raw(
        `create trigger discrepancy_totals_${op} after ${op} on discrepancies referencing ${refs}
         for each statement execute function discrepancy_totals_apply()`,
      )
      .execute(db);
  }
  // Row-level with a WHEN: a run's update of last_seen_at on every row it sees queues nothing.
  await sql`create trigger discrepancy_totals_update after update on discrepancies for each row
    when ((old.business_date, old.kind, old.currency, old.status, old.stake_cents)
      is distinct from (new.business_date, new.kind, new.currency, new.status, new.stake_cents))
    execute function discrepancy_totals_change()`.execute(db);
  await sql`create function compact_discrepancy_totals() returns void language sql as $$
    with folded as (delete from discrepancy_totals returning *)
    insert into discrepancy_totals (business_date, kind, currency, status, count, cents)
    select business_date, kind, currency, status, sum(count), sum(cents) from folded
    group by 1, 2, 3, 4 having sum(count) <> 0 or sum(cents) <> 0 $$`.execute(db);
  await sql`comment on function compact_discrepancy_totals() is ${sql.lit(
    'Folds the deltas of discrepancy_totals into one row per key; called at the end of every reconcile run.',
  )}`.execute(db);
  await sql`insert into discrepancy_totals (business_date, kind, currency, status, count, cents)
    select coalesce(business_date, 'infinity'), kind, coalesce(currency, ''), status, count(*), sum(stake_cents)
    from discrepancies group by 1, 2, 3, 4`.execute(db);

  // The run's check of fixed_in_ledger resolutions reads only those.
  await sql`create index discrepancies_fixed_in_ledger_idx on discrepancies (business_date)
    where resolution = 'fixed_in_ledger'`.execute(db);

  await sql`alter table discrepancy_events add column actor text`.execute(db);
  await sql`comment on column discrepancy_events.actor is ${sql.lit(
    'Workbench user (or token:NAME, or cli:NAME) who did it; null when a reconcile run did.',
  )}`.execute(db);
  await sql`alter table discrepancy_events drop constraint discrepancy_events_event_check`.execute(db);
  await sql`alter table discrepancy_events add constraint discrepancy_events_event_check check (event in
    ('opened','changed','acknowledged','resolved','reopened','assigned','commented','verified'))`.execute(db);
  await sql`comment on column discrepancy_events.event is ${sql.lit(
    'What happened: opened, changed, resolved, reopened, verified (by a run); acknowledged, assigned, commented, resolved, reopened (by a person).',
  )}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from discrepancy_events where event in ('assigned','commented','verified')`.execute(db);
  await sql`alter table discrepancy_events drop constraint discrepancy_events_event_check`.execute(db);
  await sql`alter table discrepancy_events add constraint discrepancy_events_event_check check (event in
    ('opened','changed','acknowledged','resolved','reopened'))`.execute(db);
  await sql`alter table discrepancy_events drop column actor`.execute(db);
  for (const op of ['insert', 'update', 'delete'])
    await sql.raw(`drop trigger if exists discrepancy_totals_${op} on discrepancies`).execute(db);
  await sql`drop function if exists compact_discrepancy_totals()`.execute(db);
  await sql`drop function if exists discrepancy_totals_change()`.execute(db);
  await sql`drop function if exists discrepancy_totals_apply()`.execute(db);
  await sql`drop table if exists discrepancy_totals`.execute(db);
  await sql`drop index if exists discrepancies_return_idx`.execute(db);
  await sql`drop index if exists discrepancies_worklist_kind_idx`.execute(db);
  await sql`drop index if exists discrepancies_fixed_in_ledger_idx`.execute(db);
  await sql`drop index if exists discrepancies_assignee_idx`.execute(db);
  await sql`drop index if exists discrepancies_worklist_all_idx`.execute(db);
  await sql`drop index if exists discrepancies_worklist_idx`.execute(db);
  await sql`alter table discrepancies drop column stake_cents, drop column resolved_by,
    drop column resolution, drop column assignee`.execute(db);
  for (const t of [...tables].reverse()) await sql.raw(`drop table if exists ${t.name}`).execute(db);
}
