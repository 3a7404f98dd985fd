import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * Tolerances and write-offs as settings (issue 29, sections 3 and 4; docs/finance.md).
 *
 * `matching_tolerances`: per account and currency, the amount tolerance (a difference of at most
 * this many cents is equal), the date lag (business days added to the grace periods) and the
 * write-off limit (a difference beyond the tolerance and within the limit is a discrepancy resolved
 * automatically as written_off). Versioned per account: a change inserts rows under the account's
 * next version, never updates one (a trigger refuses updates and deletes). No row: all zero, exact
 * matching.
 *
 * `write_offs`: every amount written off, automatically by a reconcile run (written_off_by 'recon')
 * or by a person (a manual match with a difference); a write-off undone is a second row of the
 * opposite amount that names it (reversal_of). Insert-only too.
 *
 * `reconcile_settings`: each proposed settings file, when previewed over the whole history (with
 * what the preview found) and when applied, by whom.
 *
 * `discrepancies.resolution` gains `written_off`.
 */

// The account name check in the form of migration 0012, which spares the regex for 'default'.
const NAME_CHECK = `account = 'default' or (length(account) <= 32 and account ~ '^[a-z0-9-]+$')`;
const VISIBLE = (col: string) => `public.account_visible(${col}, current_user)`;
const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;
const CURRENCY = `char(3) not null check (currency ~ '^[A-Z]{3}$')`;

type Columns = readonly [name: string, type: string, comment: string][];

const TOLERANCE_COLUMNS: Columns = [
  [
    'account',
    `text not null constraint matching_tolerances_account_name check (${NAME_CHECK})`,
    'Provider account the tolerance applies to.',
  ],
  [
    'currency',
    CURRENCY,
    'ISO 4217 currency the tolerance applies to (amounts of other currencies are exact).',
  ],
  [
    'version',
    'bigint not null check (version >= 1)',
    "The account's tolerances version that set this row: each change of an account's tolerances takes the next version; the row of a currency in force at version V is its row of the greatest version <= V. Reconcile runs record the version they used (reconcile_runs.settings.tolerances.version; 0 = none set).",
  ],
  [
    'amount_tolerance_cents',
    'bigint not null default 0 check (amount_tolerance_cents >= 0)',
    'An amount or fee difference of at most this many cents (absolute) is no discrepancy: the amounts are equal for matching.',
  ],
  [
    'date_lag_business_days',
    'integer not null default 0 check (date_lag_business_days >= 0)',
    'Business days added to the grace period before a ledger entry the provider has not reported (missing_at_provider) or a return the ledger has not booked (return_not_booked) is a discrepancy.',
  ],
  [
    'write_off_limit_cents',
    'bigint not null default 0 check (write_off_limit_cents >= 0)',
    'An amount or fee difference beyond the tolerance and of at most this many cents (absolute) is a discrepancy resolved automatically as written_off, listed in write_offs.',
  ],
  [
    'set_by',
    'text not null check (length(set_by) > 0)',
    'Who set it: cli:NAME, a workbench user, or token:NAME.',
  ],
  ['set_at', 'timestamptz not null default now()', 'When it was set (UTC).'],
  ['note', 'text', 'Why, in the words of who set it.'],
  [
    'settings_id',
    'bigint',
    'The settings file (reconcile_settings) whose application set it; null when set one by one.',
  ],
];

const WRITE_OFF_COLUMNS: Columns = [
  ['write_off_id', 'bigint generated always as identity primary key', 'Identifier.'],
  [
    'account',
    `text not null constraint write_offs_account_name check (${NAME_CHECK})`,
    'Provider account of the item written off.',
  ],
  ['currency', CURRENCY, 'Currency of amount_cents; totals are per currency, never added across currencies.'],
  [
    'amount_cents',
    'bigint not null',
    'The difference written off, in cents, signed as discrepancies.difference_cents (the ledger or reported side minus the expected side); a reversal carries the opposite amount.',
  ],
  ['reason', 'text not null check (length(reason) > 0)', 'Why it was written off, in words.'],
  [
    'kind',
    'text',
    'The discrepancy kind written off (amount_mismatch, fee_mismatch), or null for a manual match.',
  ],
  ['business_date', 'date', 'Eastern business date of the item written off.'],
  [
    'discrepancy_id',
    'bigint references discrepancies (discrepancy_id)',
    'The discrepancy written off, if any.',
  ],
  ['manual_match_id', 'bigint', 'The manual match whose difference was written off, if any.'],
  ['run_id', 'bigint', 'The reconcile run that wrote it off automatically; null when a person did.'],
  [
    'tolerance_version',
    'bigint',
    "The account's tolerances version whose write-off limit allowed it (automatic ones).",
  ],
  [
    'reversal_of',
    'bigint references write_offs (write_off_id)',
    'The write-off this row undoes (its difference grew beyond the limit, or the match was undone); null otherwise.',
  ],
  [
    'written_off_by',
    'text not null check (length(written_off_by) > 0)',
    "Who wrote it off: 'recon' for a reconcile run, else the person (workbench user, token:NAME, cli:NAME).",
  ],
  ['written_off_at', 'timestamptz not null default now()', 'When (UTC).'],
];

const SETTINGS_COLUMNS: Columns = [
  ['settings_id', 'bigint generated always as identity primary key', 'Identifier.'],
  [
    'content_sha256',
    `char(64) not null check (content_sha256 ~ '^[0-9a-f]{64}$')`,
    'SHA-256 of the settings as parsed (canonical JSON): the same proposal has the same hash.',
  ],
  ['content', 'jsonb not null', 'The proposed tolerances: {tolerances: [{account, currency, ...}]}.'],
  ['previewed_by', 'text not null', 'Who previewed it over the whole history.'],
  ['previewed_at', 'timestamptz not null default now()', 'When the preview finished (UTC).'],
  [
    'preview',
    'jsonb not null',
    'What the preview found: per kind and currency, what would open and close, agreement.',
  ],
  ['applied_by', 'text', 'Who applied it (recon tolerances apply); null while not applied.'],
  ['applied_at', 'timestamptz', 'When it was applied (UTC).'],
];

async function createTable(db: Kysely<any>, name: string, columns: Columns, extra: string, comment: string) {
  const body = [...columns.map(([n, t]) => `${n} ${t}`), ...(extra ? [extra] : [])].join(', ');
  await sql.raw(`create table ${name} (${body})`).execute(db);
  await sql.raw(`comment on table ${name} is ${lit(comment)}`).execute(db);
  for (const [column, , text] of columns) {
    await sql.raw(`comment on column ${name}.${column} is ${lit(text)}`).execute(db);
  }
}

const RESOLUTION_COMMENT =
  'How it was resolved: accepted, fixed_in_ledger (the next run verifies it and reopens it if still wrong), provider_error (by a person), or written_off (a difference within the write-off limit, by a run, or by a person; listed in write_offs); null when later data resolved it or it is unresolved.';

export async function up(db: Kysely<any>): Promise<void> {
  await createTable(
    db,
    'matching_tolerances',
    TOLERANCE_COLUMNS,
    'primary key (account, currency, version)',
    'Matching tolerances per account and currency, versioned (docs/finance.md, Tolerances and write-offs): amount tolerance, date lag, write-off limit. Insert-only.',
  );
  await createTable(
    db,
    'write_offs',
    WRITE_OFF_COLUMNS,
    '',
    'Every difference written off, automatically (within the write-off limit) or by a person, with its reason; insert-only (an undo is a reversing row). Totals per currency and month: recon report write-offs.',
  );
  await sql.raw('create index write_offs_at_idx on write_offs (written_off_at)').execute(db);
  await sql.raw('create index write_offs_discrepancy_idx on write_offs (discrepancy_id)').execute(db);
  await createTable(
    db,
    'reconcile_settings',
    SETTINGS_COLUMNS,
    '',
    '[pipeline only] Proposed tolerance settings files (they name several accounts at once, so no analyst login reads them): previewed over the whole history (recon rules preview) and, separately, applied (recon tolerances apply), with who and when.',
  );
  await sql
    .raw(
      `create function recon_insert_only() returns trigger language plpgsql as $$
       begin
         raise exception '% is insert-only: add a new row (a new version, or a reversing write-off) instead', tg_table_name;
       end $$`,
    )
    .execute(db);
  for (const table of ['matching_tolerances', 'write_offs']) {
    await sql
      .raw(
        `create trigger ${table}_insert_only before update or delete on ${table}
         for each row execute function recon_insert_only()`,
      )
      .execute(db);
    await sql.raw(`alter table ${table} enable row level security`).execute(db);
    await sql
      .raw(`create policy ${table}_by_account on ${table} for all using (${VISIBLE('account')})`)
      .execute(db);
  }
  await sql
    .raw(
      `alter table discrepancies drop constraint discrepancies_resolution_check,
        add constraint discrepancies_resolution_check
        check (resolution in ('accepted','fixed_in_ledger','provider_error','written_off'))`,
    )
    .execute(db);
  await sql.raw(`comment on column discrepancies.resolution is ${lit(RESOLUTION_COMMENT)}`).execute(db);
  await sql
    .raw(
      `do $$ begin
         if exists (select from pg_roles where rolname = 'recon_analyst') then
           grant select on matching_tolerances, write_offs to recon_analyst;
           -- Proposals name several accounts at once: not for logins limited to some.
           revoke select on reconcile_settings from recon_analyst;
         end if;
       end $$`,
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `update discrepancies set resolution = 'accepted' where resolution = 'written_off';
       alter table discrepancies drop constraint discrepancies_resolution_check,
        add constraint discrepancies_resolution_check
        check (resolution in ('accepted','fixed_in_ledger','provider_error'))`,
    )
    .execute(db);
  await sql
    .raw(
      `comment on column discrepancies.resolution is ${lit('How a person resolved it: accepted, fixed_in_ledger (the next run verifies it and reopens it if still wrong) or provider_error; null when later data resolved it or it is unresolved.')}`,
    )
    .execute(db);
  await sql.raw('drop table reconcile_settings, write_offs, matching_tolerances').execute(db);
  await sql.raw('drop function recon_insert_only()').execute(db);
}
