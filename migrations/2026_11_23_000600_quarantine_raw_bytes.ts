import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * notification_quarantine keeps the bytes exactly as received (bytea: invalid UTF-8 and NUL included),
 * dedupes a provider's retries of the same refused body on a hash of kind and bytes, and counts them.
 * `body` (text) becomes nullable: it is null when the bytes are not text PostgreSQL can hold.
 */
const comments: Record<string, string> = {
  body: '[personal data] The body as received, as text, when the bytes are valid UTF-8 without NUL; else null (see raw_body).',
  raw_body:
    '[personal data] The body exactly as received, byte for byte (invalid UTF-8 and NUL included): what the provider sent.',
  body_sha256:
    '[personal data] SHA-256, hex, of the kind, a newline and the raw bytes (unkeyed, so a guessable body could be confirmed from it): a retry of the same refused body is counted on the same row. Null on rows older than this column that repeat an earlier row.',
  delivery_count: 'How many times this refused body was delivered.',
  last_received_at: 'Latest delivery of this refused body (UTC).',
};

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table notification_quarantine
    add column raw_body bytea,
    add column body_sha256 char(64) check (body_sha256 ~ '^[0-9a-f]{64}$'),
    add column delivery_count integer not null default 1 check (delivery_count >= 1),
    add column last_received_at timestamptz`.execute(db);
  await sql`update notification_quarantine
    set raw_body = convert_to(body, 'UTF8'), last_received_at = received_at`.execute(db);
  // Older rows that repeat an earlier one keep a null hash (they stay as they are, nothing is merged).
  await sql`update notification_quarantine q set body_sha256 = h.hash
    from (select quarantine_id, hash,
                 row_number() over (partition by hash order by quarantine_id) as n
          from (select quarantine_id,
                       encode(sha256(convert_to(kind || E'\n', 'UTF8') || raw_body), 'hex') as hash
                from notification_quarantine) x) h
    where h.quarantine_id = q.quarantine_id and h.n = 1`.execute(db);
  await sql`alter table notification_quarantine
    alter column raw_body set not null,
    alter column body drop not null,
    alter column last_received_at set not null,
    alter column last_received_at set default now()`.execute(db);
  await sql`create unique index notification_quarantine_sha256_idx on notification_quarantine (body_sha256)`.execute(
    db,
  );
  for (const [column, comment] of Object.entries(comments)) {
    await sql`comment on column ${sql.ref(`notification_quarantine.${column}`)} is ${sql.lit(comment)}`.execute(
      db,
    );
  }
  // The analyst role sees the counts; raw_body and its hash stay pipeline-only (personal data).
  await sql`do $$ begin
      if exists (select from pg_roles where rolname = 'recon_analyst') then
        grant select (delivery_count, last_received_at) on notification_quarantine to recon_analyst;
      end if;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists notification_quarantine_sha256_idx`.execute(db);
  // Rows whose bytes were not text get an escaped copy back (the column was text not null).
  await sql`update notification_quarantine
    set body = encode(raw_body, 'escape') where body is null`.execute(db);
  await sql`alter table notification_quarantine
    alter column body set not null,
    drop column raw_body,
    drop column body_sha256,
    drop column delivery_count,
    drop column last_received_at`.execute(db);
  await sql`comment on column notification_quarantine.body is ${sql.lit('[personal data] The body as received.')}`.execute(
    db,
  );
}
