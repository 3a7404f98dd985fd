import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * The workbench against an attacker who can reach it (docs/security.md):
 *
 * - Sign-in attempts are counted before the password is checked, per user name and client address
 *   and per client address alone, in workbench_sign_in_throttle; it replaces
 *   workbench_sign_in_failures, which locked a name out from everywhere.
 * - API tokens expire (existing live tokens 90 days after this migration), their names are unique
 *   (a name shared by several tokens keeps it on the oldest; the others get -ID appended), and a
 *   token, like a user, can be limited to accounts (null: every account).
 *
 * Every new table is [pipeline only]: recon_analyst reads none of it.
 */

const ACCOUNT_LIST_CHECK = `array_position(accounts, null) is null and cardinality(accounts) between 1 and 100
  and array_to_string(accounts, ',') ~ '^[a-z0-9-]{1,32}(,[a-z0-9-]{1,32})*$'`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop table workbench_sign_in_failures`.execute(db);
  await sql`create table workbench_sign_in_throttle (
    scope text not null check (scope in ('name_client', 'client')),
    key_sha256 char(64) not null check (key_sha256 ~ '^[0-9a-f]{64}$'),
    attempts integer not null check (attempts >= 0),
    last_attempt_at timestamptz not null,
    next_allowed_at timestamptz not null,
    primary key (scope, key_sha256)
  )`.execute(db);
  await sql`comment on table workbench_sign_in_throttle is ${sql.lit(
    '[pipeline only] Sign-in attempts counted before the password check, per user name and client address (name_client) and per client address (client), to slow guessing and spraying without locking a user out from elsewhere. Keys are hashed.',
  )}`.execute(db);
  const comments: Record<string, string> = {
    scope:
      'name_client: one normalised user name from one client address; client: every name from one address.',
    key_sha256: 'SHA-256 (hex) of the scope key (name and address, or address): neither is stored.',
    attempts: 'Attempts counted since the counting began again (a success takes its own back).',
    last_attempt_at: 'Last counted attempt (UTC); after a quiet period the count starts again.',
    next_allowed_at: 'No attempt of this key is checked before this instant (UTC): the growing delay.',
  };
  for (const [column, comment] of Object.entries(comments))
    await sql`comment on column ${sql.ref(`workbench_sign_in_throttle.${column}`)} is ${sql.lit(comment)}`.execute(
      db,
    );
  await sql`do $$ begin
      if exists (select from pg_roles where rolname = 'recon_analyst') then
        revoke all on workbench_sign_in_throttle from recon_analyst;
      end if;
    end $$`.execute(db);

  // Token names unique: a duplicate keeps its events' name on the oldest token.
  await sql`update workbench_tokens t set name = left(t.name, 40) || '-' || t.token_id
    where exists (select 1 from workbench_tokens o where o.name = t.name and o.token_id < t.token_id)`.execute(
    db,
  );
  await sql`alter table workbench_tokens add constraint workbench_tokens_name_key unique (name)`.execute(db);
  await sql`alter table workbench_tokens add column expires_at timestamptz`.execute(db);
  await sql`update workbench_tokens set expires_at = greatest(now(), created_at) + interval '90 days'`.execute(
    db,
  );
  await sql`alter table workbench_tokens alter column expires_at set not null`.execute(db);
  await sql`comment on column workbench_tokens.expires_at is ${sql.lit(
    'After this instant the token is refused (recon tokens create --expires-in-days; a maximum applies).',
  )}`.execute(db);
  for (const table of ['workbench_tokens', 'workbench_users']) {
    await sql
      .raw(
        `alter table ${table} add column accounts text[] constraint ${table}_accounts_check check (${ACCOUNT_LIST_CHECK})`,
      )
      .execute(db);
    await sql`comment on column ${sql.ref(`${table}.accounts`)} is ${sql.lit(
      'Provider accounts this one may see and act on (--account); null: every account.',
    )}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['workbench_tokens', 'workbench_users'])
    await sql.raw(`alter table ${table} drop column accounts`).execute(db);
  await sql`alter table workbench_tokens drop column expires_at`.execute(db);
  await sql`alter table workbench_tokens drop constraint workbench_tokens_name_key`.execute(db);
  await sql`drop table workbench_sign_in_throttle`.execute(db);
  await sql`create table workbench_sign_in_failures (
      username text primary key,
      failures integer not null check (failures >= 0),
      first_failed_at timestamptz not null,
      locked_until timestamptz
    )`.execute(db);
  await sql`comment on table workbench_sign_in_failures is ${sql.lit(
    '[pipeline only] Failed sign-ins per user name, to throttle password guessing; cleared by a successful sign-in.',
  )}`.execute(db);
}
