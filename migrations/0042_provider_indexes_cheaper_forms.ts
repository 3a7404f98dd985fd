import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * provider_transactions_on_idx (transaction_on), a B-tree written at a sorted position for every
 * provider row a load writes, becomes a BRIN index, as legacy_transactions_on_idx did in 0028 (issue
 * 30, section 3; docs/architecture.md, "Indexes of the provider tables", shows each reader's plan
 * before and after): its readers ask for ranges of days (a run's window, a day's roll-forward), and
 * rows arrive a window at a time. What a BRIN index cannot answer is min/max of the days, which the
 * workbench overview asks on every page: provider_transaction_days answers it instead.
 *
 * provider_transaction_days holds each (account, day) that has provider transactions. Writes keep it
 * true in the statement that changes provider_transactions: the loader notes its COPYs' days itself
 * (as it notes their keys, migration 0036: while recon.keys_noted is on the insert trigger returns at
 * once), the statement triggers below note every other insert, an update or delete that empties a
 * day removes it, and a truncate empties it.
 */

const DAYS = 'provider_transaction_days';
/** The account name check of every table with an account, in migration 0012's form. */
const ACCOUNT_NAME = `account = 'default' or (length(account) <= 32 and account ~ '^[a-z0-9-]+$')`;

/** Notes the days of the statement's new rows. */
const NOTE_NEW_DAYS = `insert into ${DAYS} (account, transaction_on)
      select distinct account, transaction_on from new_rows where transaction_on is not null
    on conflict do nothing;`;

/** Forgets the days of `rows` (old rows) that no provider transaction is on any more. */
const forgetEmptiedDays = (rows: string) => `delete from ${DAYS} d using (${rows}) o
      where d.account = o.account and d.transaction_on = o.transaction_on
        and not exists (select 1 from provider_transactions p
          where p.transaction_on = o.transaction_on and p.account = o.account);`;

const FUNCTIONS: Record<string, string> = {
  insert: `begin
    if current_setting('recon.keys_noted', true) = 'on' then return null; end if;
    ${NOTE_NEW_DAYS}
    return null;
  end`,
  update: `begin
    ${NOTE_NEW_DAYS}
    ${forgetEmptiedDays('select account, transaction_on from old_rows except select account, transaction_on from new_rows')}
    return null;
  end`,
  delete: `begin
    ${forgetEmptiedDays('select distinct account, transaction_on from old_rows')}
    return null;
  end`,
  truncate: `begin
    delete from ${DAYS};
    return null;
  end`,
};

const REFERENCING: Record<string, string> = {
  insert: 'referencing new table as new_rows',
  update: 'referencing old table as old_rows new table as new_rows',
  delete: 'referencing old table as old_rows',
  truncate: '',
};

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `create table ${DAYS} (
      account text not null,
      transaction_on date not null,
      primary key (account, transaction_on),
      constraint ${DAYS}_account_name check (${ACCOUNT_NAME}))`,
    )
    .execute(db);
  await sql
    .raw(
      `comment on table ${DAYS} is 'Each provider account and business date (Eastern) that has provider transactions: the span of days the workbench overview shows, without reading provider_transactions. Kept in the statement that writes provider_transactions (the loader, triggers).'`,
    )
    .execute(db);
  await sql
    .raw(`comment on column ${DAYS}.account is 'Provider account (provider_transactions.account).'`)
    .execute(db);
  await sql
    .raw(
      `comment on column ${DAYS}.transaction_on is 'Business date (provider_transactions.transaction_on) holding at least one provider transaction of the account.'`,
    )
    .execute(db);
  await sql
    .raw(
      `insert into ${DAYS} (account, transaction_on)
      select distinct account, transaction_on from provider_transactions where transaction_on is not null`,
    )
    .execute(db);
  for (const [event, body] of Object.entries(FUNCTIONS)) {
    await sql
      .raw(`create function ${DAYS}_${event}() returns trigger language plpgsql as $$ ${body} $$`)
      .execute(db);
    await sql
      .raw(
        `create trigger provider_transactions_days_${event} after ${event} on provider_transactions
      ${REFERENCING[event]} for each statement execute function ${DAYS}_${event}()`,
      )
      .execute(db);
  }
  // An analyst login limited to some accounts sees their days only, as every table with an account.
  await sql.raw(`alter table ${DAYS} enable row level security`).execute(db);
  await sql
    .raw(
      `create policy ${DAYS}_by_account on ${DAYS} for all using (public.account_visible(account, current_user))`,
    )
    .execute(db);
  await sql
    .raw(
      `do $$ begin
      if exists (select from pg_roles where rolname = 'recon_analyst') then
        grant select on ${DAYS} to recon_analyst;
      end if;
    end $$`,
    )
    .execute(db);
  await sql`drop index provider_transactions_on_idx`.execute(db);
  await sql`create index provider_transactions_on_idx on provider_transactions using brin (transaction_on)
    with (pages_per_range = 32, autosummarize = on)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index provider_transactions_on_idx`.execute(db);
  await sql`create index provider_transactions_on_idx on provider_transactions (transaction_on)`.execute(db);
  for (const event of Object.keys(FUNCTIONS)) {
    await sql.raw(`drop trigger provider_transactions_days_${event} on provider_transactions`).execute(db);
    await sql.raw(`drop function ${DAYS}_${event}()`).execute(db);
  }
  await sql.raw(`drop table ${DAYS}`).execute(db);
}
