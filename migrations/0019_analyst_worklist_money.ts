import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * The analysts' morning worklist, `open_discrepancies`, gets the money at stake, the assignee and the
 * resolution the workbench shows, so that an analyst's totals per kind and currency are the
 * workbench's (the sum of `stake_cents` of the unresolved discrepancies). The new columns come last:
 * `create or replace view` keeps the columns it had, and every query written against it still runs.
 *
 * Comments that sent readers to README sections which have moved now name the guide in docs/.
 */

const VISIBLE = `public.account_visible(account, current_user)`;

const COLUMNS_BEFORE = `discrepancy_id, kind, rule, business_date, transaction_id, merchant_transaction_id,
      return_transaction_id, currency, expected_amount_cents, actual_amount_cents, difference_cents, status,
      first_seen_at, last_seen_at, acknowledged_at, acknowledged_by, note,
      (current_date - business_date) as age_days, account`;

const NEW_COLUMNS: Record<string, string> = {
  stake_cents:
    'Money at stake, in cents of currency: the whole amount for a currency, type or status mismatch, else the absolute difference, else the amount (discrepancies.stake_cents). Its sum per kind and currency is the workbench total.',
  assignee: 'Workbench user the discrepancy is assigned to; null when nobody is.',
  resolution:
    'How a person resolved it (accepted, fixed_in_ledger, provider_error), as the workbench shows it. Null on the rows of this view: a resolved item leaves the worklist, and reopening one clears it.',
};

/** Comments that cited README sections, and what they say now. */
const RECOMMENTS: readonly [string, string][] = [
  [
    'column discrepancies.kind',
    'What is wrong: missing_in_ledger, amount_mismatch, ... (every kind, its cause and what to do: docs/finance.md).',
  ],
  [
    'column open_discrepancies.kind',
    'What is wrong (every kind, its cause and what to do: docs/finance.md).',
  ],
  [
    'table merchant_ledger',
    'The merchant\'s book of record: one entry per merchant transaction id, imported with recon ledger import or written directly by the merchant\'s system (docs/connecting-a-provider.md, "Your ledger").',
  ],
];

const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `create or replace view open_discrepancies with (security_barrier) as
    select ${COLUMNS_BEFORE}, ${Object.keys(NEW_COLUMNS).join(', ')}
    from discrepancies where resolved_at is null and ${VISIBLE}`,
    )
    .execute(db);
  for (const [column, comment] of Object.entries(NEW_COLUMNS)) {
    await sql.raw(`comment on column open_discrepancies.${column} is ${lit(comment)}`).execute(db);
  }
  for (const [object, comment] of RECOMMENTS) {
    await sql.raw(`comment on ${object} is ${lit(comment)}`).execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  // A view loses columns only by being created again: keep its comments and grants across that.
  const comments = await sql<{ column: string; comment: string }>`
    select a.attname as column, d.description as comment
    from pg_attribute a join pg_description d on d.objoid = a.attrelid and d.objsubid = a.attnum
    where a.attrelid = 'open_discrepancies'::regclass`.execute(db);
  const view = await sql<{ comment: string | null }>`
    select obj_description('open_discrepancies'::regclass, 'pg_class') as comment`.execute(db);
  await sql`drop view open_discrepancies`.execute(db);
  await sql
    .raw(
      `create view open_discrepancies with (security_barrier) as
    select ${COLUMNS_BEFORE} from discrepancies where resolved_at is null and ${VISIBLE}`,
    )
    .execute(db);
  await sql`grant select on open_discrepancies to recon_analyst`.execute(db);
  const comment = view.rows[0]?.comment;
  if (comment) await sql.raw(`comment on view open_discrepancies is ${lit(comment)}`).execute(db);
  for (const row of comments.rows) {
    if (row.column in NEW_COLUMNS) continue;
    await sql.raw(`comment on column open_discrepancies.${row.column} is ${lit(row.comment)}`).execute(db);
  }
}
