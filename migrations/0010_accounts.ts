import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * Several provider accounts in one warehouse (docs/connecting-a-provider.md, "Several accounts"). Every row the
 * provider, the ledger or the pipeline writes carries `account`, the name of the provider account it
 * belongs to. Existing rows take `default` through the column default (no rewrite, no reload): a
 * single-account warehouse is the account named default.
 *
 * The provider's ids are unique within one account only, so every key built on them starts with
 * `account`. Analyst logins can be limited to some accounts (recon analysts grant NAME --accounts):
 * row-level security on every table with `account`, and the same condition in every analyst view
 * (views run with their owner's rights, which bypass row-level security).
 */
const NAME_CHECK = `account ~ '^[a-z0-9-]{1,32}$'`;

const COMMENT =
  'Provider account the row belongs to: a name of the accounts configuration (RECON_ACCOUNTS_FILE); default in a single-account warehouse.';

/** Tables that get `account`, with the comment's subject when it differs. */
const TABLES: readonly { table: string; comment?: string; nullable?: boolean }[] = [
  {
    table: 'loads',
    comment: 'Provider account whose data this load brought (default for a single account).',
  },
  { table: 'rejected_rows', comment: 'Provider account of the load that read the record.' },
  { table: 'provider_transactions' },
  { table: 'legacy_transactions' },
  { table: 'provider_returns' },
  { table: 'provider_adjustments' },
  {
    table: 'merchant_ledger',
    comment:
      'Provider account the ledger entry belongs to: the file\u2019s account column, else the account whose legacy merchant id is the entry\u2019s merchant_id, else default.',
  },
  {
    table: 'notifications',
    comment: 'Provider account the notification was filed under (merchantId, path or secret).',
  },
  {
    table: 'notification_quarantine',
    nullable: true,
    comment:
      'Provider account the refused body was sent for, when known; null when no configured account matches it.',
  },
  { table: 'status_lookups' },
  { table: 'row_history', comment: 'Provider account of the changed row.' },
  { table: 'pull_cursors', comment: 'Provider account the cursor pulls for.' },
  {
    table: 'reconcile_runs',
    comment: 'Provider account the run reconciled; every account has its own runs.',
  },
  { table: 'transaction_matches' },
  { table: 'return_matches' },
  { table: 'notification_matches' },
  { table: 'source_matches' },
  { table: 'discrepancies' },
  { table: 'discrepancy_events', comment: 'Provider account of the discrepancy.' },
  { table: 'discrepancy_totals' },
];

/** Keys rebuilt with `account` first: [table, constraint, columns, primary key?]. */
const KEYS: readonly [string, string, string, boolean][] = [
  ['provider_transactions', 'provider_transactions_pkey', 'account, transaction_id', true],
  ['legacy_transactions', 'legacy_transactions_pkey', 'account, transaction_id', true],
  ['provider_returns', 'provider_returns_pkey', 'account, return_transaction_id', true],
  ['provider_adjustments', 'provider_adjustments_adjustment_key_key', 'account, adjustment_key', false],
  ['merchant_ledger', 'merchant_ledger_pkey', 'account, merchant_transaction_id', true],
  ['notifications', 'notifications_delivery_key_key', 'account, delivery_key', false],
  ['discrepancies', 'discrepancies_discrepancy_key_key', 'account, discrepancy_key', false],
  ['transaction_matches', 'transaction_matches_pkey', 'account, transaction_id', true],
  [
    'transaction_matches',
    'transaction_matches_merchant_transaction_id_key',
    'account, merchant_transaction_id',
    false,
  ],
  ['return_matches', 'return_matches_pkey', 'account, return_transaction_id', true],
  [
    'return_matches',
    'return_matches_ledger_merchant_transaction_id_key',
    'account, ledger_merchant_transaction_id',
    false,
  ],
  ['notification_matches', 'notification_matches_target_unique', 'account, kind, target_id', false],
  ['source_matches', 'source_matches_pkey', 'account, transaction_id', true],
  ['source_matches', 'source_matches_legacy_transaction_id_key', 'account, legacy_transaction_id', false],
  ['pull_cursors', 'pull_cursors_pkey', 'account, source, window_from, window_to', true],
];

/** Lookup indexes on provider ids, rebuilt with `account` first (matching joins within an account). */
const INDEXES: readonly [string, string][] = [
  ['provider_transactions_mtid_idx', 'provider_transactions (account, merchant_transaction_id)'],
  ['discrepancy_totals_key_idx', 'discrepancy_totals (account, status, kind, currency, business_date)'],
];

/** Views an analyst reads whose definition is `SELECT ... FROM <table> t` with no WHERE. */
const REDACTED_VIEWS = [
  'legacy_transactions_redacted',
  'provider_transactions_redacted',
  'provider_returns_redacted',
  'provider_adjustments_redacted',
  'notifications_redacted',
  'notification_quarantine_redacted',
  'rejected_rows_redacted',
  'row_history_redacted',
  'status_lookups_redacted',
];

const VISIBLE = (col: string) => `public.account_visible(${col}, current_user)`;

const VIEWS: Record<string, string> = {
  open_discrepancies: `select discrepancy_id, kind, rule, business_date, transaction_id, merchant_transaction_id,
      return_transaction_id, currency, expected_amount_cents, actual_amount_cents, difference_cents, status,
      first_seen_at, last_seen_at, acknowledged_at, acknowledged_by, note,
      (current_date - business_date) as age_days, account
    from discrepancies where resolved_at is null and ${VISIBLE('account')}`,
  returns_with_originals: `select r.return_transaction_id, r.original_transaction_id, r.merchant_transaction_id,
      r.return_code, r.amount_cents, r.currency, r.returned_on, r.next_action_date as representment_date,
      r.raw_next_action_date, o.transaction_type as original_transaction_type,
      o.amount_cents as original_amount_cents, o.transaction_at as original_transaction_at,
      o.transaction_on as original_business_date, o.status as original_status,
      (r.returned_on - o.transaction_on) as days_to_return, m.ledger_merchant_transaction_id, r.account
    from provider_returns r
      left join provider_transactions o on o.account = r.account and o.transaction_id = r.original_transaction_id
      left join return_matches m on m.account = r.account and m.return_transaction_id = r.return_transaction_id
    where ${VISIBLE('r.account')}`,
  notification_delivery: `select t.transaction_id, t.merchant_transaction_id, t.transaction_on as business_date,
      t.status, t.notify_status, t.transaction_at, (m.notification_id is not null) as received,
      m.first_received_at, n.last_received_at, n.delivery_count, n.confirmed_at,
      (extract(epoch from (m.first_received_at - t.transaction_at)))::bigint as delay_seconds, t.account
    from provider_transactions t
      left join notification_matches m
        on m.account = t.account and m.kind = 'transaction' and m.target_id = t.transaction_id
      left join notifications n on n.notification_id = m.notification_id
    where ${VISIBLE('t.account')}`,
  daily_settlement_totals: `select transaction_on as business_date, currency, transaction_type,
      count(*) as transactions, sum(amount_cents)::bigint as amount_cents,
      coalesce(sum(fee_cents), 0)::bigint as fee_cents,
      (case when transaction_type = 'CREDIT' then -sum(amount_cents)
            when transaction_type = 'DEBIT' then sum(amount_cents) else null end
        - coalesce(sum(fee_cents), 0))::bigint as net_cents,
      case when transaction_type in ('DEBIT','CREDIT') then 0::bigint else count(*) end as unknown_type_count,
      (case when transaction_type in ('DEBIT','CREDIT') then 0 else sum(amount_cents) end)::bigint
        as unknown_type_amount_cents,
      account
    from provider_transactions
    where status = 'SUCCESSFUL' and ${VISIBLE('account')}
    group by account, transaction_on, currency, transaction_type`,
};

const VIEW_ACCOUNT_COMMENT =
  'Provider account of the row (see the account column of its table). A login limited to some accounts (recon analysts grant --accounts) sees only their rows.';

export async function up(db: Kysely<any>): Promise<void> {
  for (const { table, comment, nullable } of TABLES) {
    await sql
      .raw(
        `alter table ${table} add column account text ${nullable ? '' : 'not null '}default 'default' constraint ${table}_account_name check (${NAME_CHECK})`,
      )
      .execute(db);
    await sql.raw(`comment on column ${table}.account is ${lit(comment ?? COMMENT)}`).execute(db);
  }
  // Tables analysts read through column grants (personal data left out) get the new column too.
  await sql`do $$
    declare t text;
    begin
      if exists (select from pg_roles where rolname = 'recon_analyst') then
        for t in select unnest(${sql.raw(lit(`{${TABLES.map((x) => x.table).join(',')}}`))}::text[]) loop
          if has_any_column_privilege('recon_analyst', t, 'select') then
            execute format('grant select (account) on %I to recon_analyst', t);
          end if;
        end loop;
      end if;
    end $$`.execute(db);
  for (const [table, constraint, columns, primary] of KEYS) {
    await sql
      .raw(
        `alter table ${table} drop constraint ${constraint}, add constraint ${constraint} ${primary ? 'primary key' : 'unique'} (${columns})`,
      )
      .execute(db);
  }
  for (const [name, on] of INDEXES) {
    await sql.raw(`drop index ${name}`).execute(db);
    await sql.raw(`create index ${name} on ${on}`).execute(db);
  }

  // The totals deltas carry the account of their discrepancy (the tables are named with their schema:
  // a reconcile run scopes the session to one account with temporary views of the same names).
  await sql`create or replace function discrepancy_totals_apply() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into public.discrepancy_totals (account, business_date, kind, currency, status, count, cents)
        select account, coalesce(business_date, 'infinity'), kind, coalesce(currency, ''), status, count(*), sum(stake_cents)
        from new_rows group by 1, 2, 3, 4, 5;
      else
        insert into public.discrepancy_totals (account, business_date, kind, currency, status, count, cents)
        select account, coalesce(business_date, 'infinity'), kind, coalesce(currency, ''), status, -count(*), -sum(stake_cents)
        from old_rows group by 1, 2, 3, 4, 5;
      end if;
      return null;
    end $$`.execute(db);
  await sql`create or replace function discrepancy_totals_change() returns trigger language plpgsql as $$
    begin
      insert into public.discrepancy_totals (account, business_date, kind, currency, status, count, cents) values
        (old.account, coalesce(old.business_date, 'infinity'), old.kind, coalesce(old.currency, ''), old.status, -1, -old.stake_cents),
        (new.account, coalesce(new.business_date, 'infinity'), new.kind, coalesce(new.currency, ''), new.status, 1, new.stake_cents);
      return null;
    end $$`.execute(db);
  await sql`create or replace function compact_discrepancy_totals() returns void language sql as $$
    with folded as (delete from public.discrepancy_totals returning *)
    insert into public.discrepancy_totals (account, business_date, kind, currency, status, count, cents)
    select account, business_date, kind, currency, status, sum(count), sum(cents) from folded
    group by 1, 2, 3, 4, 5 having sum(count) <> 0 or sum(cents) <> 0 $$`.execute(db);
  await sql`create or replace function compact_discrepancy_totals(from_date date, to_date date) returns void language sql as $$
    with folded as (
      delete from public.discrepancy_totals where business_date between from_date and to_date returning *)
    insert into public.discrepancy_totals (account, business_date, kind, currency, status, count, cents)
    select account, business_date, kind, currency, status, sum(count), sum(cents) from folded
    group by 1, 2, 3, 4, 5 having sum(count) <> 0 or sum(cents) <> 0 $$`.execute(db);

  // Which accounts a login may see: no row for a login means every account.
  await sql`create table recon_private.analyst_accounts (
    role_name name not null,
    account text not null check (${sql.raw(NAME_CHECK)}),
    granted_at timestamptz not null default now(),
    primary key (role_name, account)
  )`.execute(db);
  await sql`comment on table recon_private.analyst_accounts is 'Accounts an analyst login is limited to (recon analysts grant NAME --accounts A,B). A login without rows sees every account.'`.execute(
    db,
  );
  // SECURITY DEFINER: analysts cannot read recon_private; `who` is evaluated by the caller.
  await sql`create function public.account_visible(account text, who name) returns boolean
    language sql stable security definer set search_path = pg_catalog, recon_private as $$
      select not exists (select 1 from recon_private.analyst_accounts a where a.role_name = $2)
          or exists (select 1 from recon_private.analyst_accounts a where a.role_name = $2 and a.account = $1)
    $$`.execute(db);
  await sql`comment on function public.account_visible(text, name) is 'Whether login who may see rows of account: true unless recon analysts grant limited it to other accounts.'`.execute(
    db,
  );
  await sql`grant execute on function public.account_visible(text, name) to public`.execute(db);

  for (const { table } of TABLES) {
    await sql.raw(`alter table ${table} enable row level security`).execute(db);
    await sql
      .raw(`create policy ${table}_by_account on ${table} for all using (${VISIBLE('account')})`)
      .execute(db);
  }

  for (const view of REDACTED_VIEWS) {
    const r = await sql<{ def: string }>`select pg_get_viewdef(${view}::regclass) as def`.execute(db);
    const def = r.rows[0]!.def.trim().replace(/;$/, '');
    const from = def.search(/\n\s*FROM /);
    if (from < 0 || /\bWHERE\b/.test(def)) throw new Error(`view ${view} is not a plain SELECT ... FROM`);
    const query = `${def.slice(0, from)}, t.account${def.slice(from)} WHERE ${VISIBLE('t.account')}`;
    await sql.raw(`create or replace view ${view} with (security_barrier) as ${query}`).execute(db);
  }
  for (const [view, query] of Object.entries(VIEWS)) {
    await sql.raw(`create or replace view ${view} with (security_barrier) as ${query}`).execute(db);
  }
  for (const view of [...REDACTED_VIEWS, ...Object.keys(VIEWS)]) {
    await sql.raw(`comment on column ${view}.account is ${lit(VIEW_ACCOUNT_COMMENT)}`).execute(db);
  }
}

const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;
