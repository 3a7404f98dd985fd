import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * The workbench (recon serve): its users, API tokens, sessions and sign-in throttle. Every table is
 * marked [pipeline only]: hashes and sign-in data are never readable by recon_analyst
 * (0005_analysts_and_privacy grants nothing on such tables).
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
  }
  await sql`create index workbench_sessions_user_idx on workbench_sessions (username)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [...tables].reverse()) await sql.raw(`drop table if exists ${t.name}`).execute(db);
}
