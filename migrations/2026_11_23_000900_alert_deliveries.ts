import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * alert_deliveries: one row per alert delivered to one webhook, so that a retried activity or a
 * restarted worker never posts the same alert twice. The webhook is named by a hash, never its URL
 * (a webhook URL is a secret).
 */
const comments: Record<string, string> = {
  alert_key:
    'What the alert is about: summary:<window workflow run id> (a reconcile run of a window) or failure:<window workflow run id> (a window that failed after its retries).',
  webhook_sha256:
    'SHA-256, hex, of the configured webhook entry (format and URL) of RECON_ALERT_WEBHOOKS; never the URL, which is a secret.',
  kind: 'summary (a reconcile run) or failure (a window that failed).',
  reconcile_run_id: 'The reconcile run a summary reports (reconcile_runs.run_id); null for a failure.',
  status_code: 'HTTP status the webhook answered (2xx).',
  attempts: 'Activity attempt that delivered it (1 on the first try).',
  delivered_at: 'When the webhook accepted it (UTC).',
};

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table alert_deliveries (
    alert_key text not null check (length(alert_key) between 1 and 200),
    webhook_sha256 char(64) not null check (webhook_sha256 ~ '^[0-9a-f]{64}$'),
    kind text not null check (kind in ('summary','failure')),
    reconcile_run_id bigint,
    status_code integer not null,
    attempts integer not null check (attempts >= 1),
    delivered_at timestamptz not null default now(),
    primary key (alert_key, webhook_sha256)
  )`.execute(db);
  await sql`comment on table alert_deliveries is ${sql.lit(
    'Alerts delivered to the webhooks of RECON_ALERT_WEBHOOKS, one row per alert and webhook: a retry skips what is here.',
  )}`.execute(db);
  for (const [column, comment] of Object.entries(comments)) {
    await sql`comment on column ${sql.ref(`alert_deliveries.${column}`)} is ${sql.lit(comment)}`.execute(db);
  }
  // recon_analyst reads it (default privileges): nothing personal, and a hash cannot be turned back
  // into a webhook URL, which holds a long random token.
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table alert_deliveries`.execute(db);
}
