import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

const comments: Record<string, string> = {
  source:
    'Pull source (report-transactions, report-returns, legacy-transactions, legacy-returns, legacy-adjustments).',
  window_from: 'First Eastern calendar day of the window (inclusive).',
  window_to: 'Last Eastern calendar day of the window (inclusive).',
  load_id: 'Last committed load of this source and window.',
  file_sha256: 'SHA-256 of the provider response that load read, hex, when known.',
  rows_loaded: 'Records that load parsed and validated.',
  workflow_id: 'Temporal workflow that committed that load.',
  run_id: 'Temporal run of that workflow: a retried activity of the same run skips a committed load.',
  committed_at: 'When the cursor was last moved (UTC).',
};

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table pull_cursors (
      source text not null check (source in ('report-transactions','report-returns','legacy-transactions','legacy-returns','legacy-adjustments')),
      window_from date not null,
      window_to date not null,
      load_id bigint not null references loads (load_id),
      file_sha256 char(64) check (file_sha256 ~ '^[0-9a-f]{64}$'),
      rows_loaded bigint not null check (rows_loaded >= 0),
      workflow_id text not null,
      run_id text not null,
      committed_at timestamptz not null default now(),
      primary key (source, window_from, window_to),
      constraint pull_cursors_window_ordered check (window_to >= window_from)
    )`.execute(db);
  await sql`comment on table pull_cursors is ${sql.lit(
    'Per pull source and window, the last load the Temporal workflows committed: a retried window skips the sources this run already loaded. Cursor state lives here, never in workflow payloads.',
  )}`.execute(db);
  for (const [column, comment] of Object.entries(comments)) {
    await sql`comment on column ${sql.ref(`pull_cursors.${column}`)} is ${sql.lit(comment)}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists pull_cursors`.execute(db);
}
