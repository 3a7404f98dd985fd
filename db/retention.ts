/**
 * Retention of consumers' personal data (docs/security.md, "Personal data"): after N days, raw
 * lines, payloads, refused bodies and history entries keep only their redacted form, the one analysts
 * read in the *_redacted views (SQL functions of migration 0005_analysts_and_privacy). Business columns stay
 * as they are, and so do the structured personal columns (consumer_email, bank_account_masked,
 * account_token, account_label): the loader compares them to tell a restatement from a re-load, and
 * they stay readable by the pipeline's role only.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';
import { DAY_MS } from '../domain/time/calendar.ts';

export interface RetentionRequest {
  /** Clear what is older than this many whole days (0 clears everything up to `now`). */
  readonly olderThanDays: number;
  /** The instant the age is judged against (ISO); default now. */
  readonly now?: string;
}

export interface RetentionSummary {
  /** Everything stored before this instant (UTC) was cleared. */
  readonly cutoff: string;
  /** Rows cleared in this run, per table.column, in a fixed order. */
  readonly cleared: Readonly<Record<string, number>>;
  readonly totalCleared: number;
}

interface Rule {
  /** table.column, as printed. */
  readonly name: string;
  readonly table: string;
  readonly column: string;
  /** Column holding the age of the personal value: when it was last written. */
  readonly age: string;
  /** The redacted value of `column`, in terms of the row's columns. */
  readonly redacted: string;
}

/**
 * One rule per personal raw column. Each statement rewrites only rows whose value still differs from
 * its redacted form, so that a second run (or a run after a crash) clears nothing twice.
 */
export const RETENTION_RULES: readonly Rule[] = [
  {
    name: 'legacy_transactions.raw',
    table: 'legacy_transactions',
    column: 'raw',
    age: 'updated_at',
    redacted: 'redact_personal_values(raw, consumer_email, bank_account_masked)',
  },
  ...(['provider_transactions', 'provider_returns', 'provider_adjustments'] as const).map((table) => ({
    name: `${table}.raw`,
    table,
    column: 'raw',
    age: 'updated_at',
    redacted: 'redact_personal(raw)',
  })),
  {
    name: 'row_history.previous',
    table: 'row_history',
    column: 'previous',
    age: 'changed_at',
    redacted: 'redact_personal_json(previous)',
  },
  {
    name: 'rejected_rows.raw',
    table: 'rejected_rows',
    column: 'raw',
    age: 'created_at',
    redacted: 'redact_personal(raw)',
  },
  {
    name: 'notifications.payload',
    table: 'notifications',
    column: 'payload',
    age: 'last_received_at',
    redacted: 'redact_personal_json(payload)',
  },
  {
    name: 'notification_quarantine.body',
    table: 'notification_quarantine',
    column: 'body',
    age: 'received_at',
    redacted: 'redact_personal_body(body)',
  },
  {
    name: 'status_lookups.response',
    table: 'status_lookups',
    column: 'response',
    age: 'looked_up_at',
    redacted: 'redact_personal_json(response)',
  },
];

/** The statement of one rule: clears the rows older than `cutoff` that still hold personal data. */
export function retentionStatement(rule: Rule, cutoff: string) {
  const redacted = sql.raw(rule.redacted);
  return sql`update ${sql.table(rule.table)} set ${sql.ref(rule.column)} = ${redacted}
    where ${sql.ref(rule.age)} < ${cutoff}::timestamptz and ${sql.ref(rule.column)} is distinct from ${redacted}`;
}

/**
 * Replaces the personal data in raw lines, payloads, bodies and history older than
 * `olderThanDays` (24-hour days before `now`) by the marker, table by table, in one transaction.
 * Idempotent: a second run with the same cutoff clears nothing. Throws RangeError for a negative or
 * fractional number of days or an unreadable `now`.
 */
export async function clearPersonalData(db: Db, req: RetentionRequest): Promise<RetentionSummary> {
  if (!Number.isInteger(req.olderThanDays) || req.olderThanDays < 0) {
    throw new RangeError(
      `retention of ${req.olderThanDays} days is not valid: use a whole number of days, 0 or more`,
    );
  }
  const nowMs = req.now === undefined ? Date.now() : Date.parse(req.now);
  if (Number.isNaN(nowMs)) throw new RangeError(`now ${JSON.stringify(req.now)} is not an ISO-8601 instant`);
  const cutoff = new Date(nowMs - req.olderThanDays * DAY_MS).toISOString();
  const cleared: Record<string, number> = {};
  await db.transaction().execute(async (trx) => {
    for (const rule of RETENTION_RULES) {
      const result = await retentionStatement(rule, cutoff).execute(trx);
      cleared[rule.name] = Number(result.numAffectedRows ?? 0);
    }
  });
  return { cutoff, cleared, totalCleared: Object.values(cleared).reduce((a, b) => a + b, 0) };
}

/** The summary as printed by `recon retention`: one line per table.column, then the total. */
export function formatRetention(summary: RetentionSummary): string {
  const width = Math.max(...Object.keys(summary.cleared).map((k) => k.length));
  const lines = Object.entries(summary.cleared).map(
    ([name, n]) => `  ${name.padEnd(width)}  ${String(n).padStart(9)}\n`,
  );
  return `personal data cleared from rows stored before ${summary.cutoff}:\n${lines.join('')}  ${'total'.padEnd(width)}  ${String(summary.totalCleared).padStart(9)}\n`;
}
