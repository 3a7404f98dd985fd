import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.
// Reconciliation: match tables (one claim per source row, enforced by UNIQUE on each side), the
// contracted fee schedule, the run log, the analysts' views and the read-only analyst role.

interface Column {
  name: string;
  type: string;
  comment: string;
}
interface Table {
  name: string;
  comment: string;
  columns: Column[];
  constraints?: string[];
  indexes?: string[];
}
interface View {
  name: string;
  comment: string;
  query: string;
  columns: Record<string, string>;
}

const c = (name: string, type: string, comment: string): Column => ({ name, type, comment });

const tables: Table[] = [
  {
    name: 'reconcile_runs',
    comment:
      'One row per run of matching (recon reconcile, or the nightly workflow): the Eastern business-date range, the settings used and the summary of what it found.',
    columns: [
      c('run_id', 'bigint generated always as identity primary key', 'Identifier.'),
      c('range_from', 'date not null', 'First Eastern business date of the range (inclusive).'),
      c('range_to', 'date not null', 'Last Eastern business date of the range (inclusive).'),
      c(
        'as_of',
        'timestamptz not null',
        'The instant the run judged grace periods and lateness against (UTC).',
      ),
      c('settings', 'jsonb not null', 'Settings used: grace business days, notification delay, ...'),
      c('summary', 'jsonb', 'Counts of matches and discrepancies by kind, when the run finished.'),
      c('started_at', 'timestamptz not null default now()', 'When the run started (UTC).'),
      c('finished_at', 'timestamptz', 'When the run committed (UTC).'),
    ],
    constraints: ['constraint reconcile_runs_range_ordered check (range_to >= range_from)'],
  },
  {
    name: 'transaction_matches',
    comment:
      'Provider transactions matched to merchant ledger entries by merchant transaction id. UNIQUE on each side: a provider transaction claims at most one ledger entry and a ledger entry is claimed at most once, so duplicates can never both match.',
    columns: [
      c(
        'transaction_id',
        'text primary key references provider_transactions (transaction_id) on delete cascade',
        'Provider transaction ID.',
      ),
      c(
        'merchant_transaction_id',
        'text not null unique references merchant_ledger (merchant_transaction_id) on delete cascade',
        'Ledger entry it matched.',
      ),
      c('rule', 'text not null', 'Matching rule that made the match.'),
      c('run_id', 'bigint references reconcile_runs (run_id)', 'Run that made the match.'),
      c('matched_at', 'timestamptz not null default now()', 'When the match was made (UTC).'),
    ],
  },
  {
    name: 'return_matches',
    comment:
      'Provider returns linked to the original transaction they return and to the RETURN entry of the merchant ledger that books them. A ledger RETURN entry is claimed by at most one return.',
    columns: [
      c(
        'return_transaction_id',
        'text primary key references provider_returns (return_transaction_id) on delete cascade',
        'Return transaction ID.',
      ),
      c(
        'original_transaction_id',
        'text references provider_transactions (transaction_id) on delete set null',
        'Original provider transaction, when it is in the warehouse.',
      ),
      c(
        'ledger_merchant_transaction_id',
        'text unique references merchant_ledger (merchant_transaction_id) on delete set null',
        'Ledger RETURN entry booking this return, when found.',
      ),
      c('rule', 'text not null', 'Matching rule that made the link.'),
      c('run_id', 'bigint references reconcile_runs (run_id)', 'Run that made the link.'),
      c('matched_at', 'timestamptz not null default now()', 'When the link was made (UTC).'),
    ],
  },
  {
    name: 'notification_matches',
    comment:
      'Notifications matched to the provider transaction or return they announce. UNIQUE on each side: one notification per provider row (the latest distinct body), one provider row per notification.',
    columns: [
      c(
        'notification_id',
        'bigint primary key references notifications (notification_id) on delete cascade',
        'Notification matched.',
      ),
      c(
        'kind',
        `text not null check (kind in ('transaction','return'))`,
        'transaction (matched to provider_transactions) or return (matched to provider_returns).',
      ),
      c('target_id', 'text not null', 'Provider transaction ID or return transaction ID.'),
      c(
        'first_received_at',
        'timestamptz not null',
        'Earliest receipt of any notification for this provider row (UTC), used for lateness.',
      ),
      c('rule', 'text not null', 'Matching rule that made the match.'),
      c('run_id', 'bigint references reconcile_runs (run_id)', 'Run that made the match.'),
      c('matched_at', 'timestamptz not null default now()', 'When the match was made (UTC).'),
    ],
    constraints: ['constraint notification_matches_target_unique unique (kind, target_id)'],
  },
  {
    name: 'source_matches',
    comment:
      'JSON report transactions paired with the legacy query interface rows of the same transaction id, compared for source conflicts.',
    columns: [
      c(
        'transaction_id',
        'text primary key references provider_transactions (transaction_id) on delete cascade',
        'Provider transaction ID (JSON report row).',
      ),
      c(
        'legacy_transaction_id',
        'text not null unique references legacy_transactions (transaction_id) on delete cascade',
        'Legacy transaction row paired with it.',
      ),
      c('run_id', 'bigint references reconcile_runs (run_id)', 'Run that made the pair.'),
      c('matched_at', 'timestamptz not null default now()', 'When the pair was made (UTC).'),
    ],
  },
  {
    name: 'fee_schedule',
    comment:
      "The merchant's contracted fees per product, transaction type and currency: fixed cents plus a percentage in basis points of the amount, rounded half up to the cent. Matching compares each successful transaction's reported fee with it.",
    columns: [
      c('product', 'text not null', 'Product code, e.g. IBT.'),
      c(
        'transaction_type',
        `text not null check (transaction_type in ('DEBIT','CREDIT'))`,
        'DEBIT (payin) or CREDIT (payout).',
      ),
      c('currency', `char(3) not null check (currency ~ '^[A-Z]{3}$')`, 'ISO 4217 currency code.'),
      c(
        'fixed_cents',
        'bigint not null default 0 check (fixed_cents >= 0)',
        'Fixed fee per transaction, cents.',
      ),
      c(
        'basis_points',
        'integer not null default 0 check (basis_points >= 0)',
        'Percentage of the amount in basis points (1 bp = 0.01%); fee = fixed + round_half_up(amount * bp / 10000).',
      ),
      c('valid_from', 'date not null', 'First Eastern business date the fee applies to (inclusive).'),
      c('valid_to', 'date', 'Last Eastern business date it applies to (inclusive); null means open-ended.'),
    ],
    constraints: [
      'primary key (product, transaction_type, currency, valid_from)',
      'constraint fee_schedule_valid_ordered check (valid_to is null or valid_to >= valid_from)',
    ],
  },
];

const views: View[] = [
  {
    name: 'daily_settlement_totals',
    comment:
      'Successful provider transactions per Eastern business date, currency and type: how many, how much, the fees and the net. The figures finance checks against the bank statement.',
    query: `
      select transaction_on as business_date, currency, transaction_type,
             count(*)::bigint as transactions,
             sum(amount_cents)::bigint as amount_cents,
             coalesce(sum(fee_cents), 0)::bigint as fee_cents,
             (case when transaction_type = 'CREDIT' then -1 else 1 end * sum(amount_cents) - coalesce(sum(fee_cents), 0))::bigint as net_cents
      from provider_transactions
      where status = 'SUCCESSFUL'
      group by transaction_on, currency, transaction_type`,
    columns: {
      business_date: 'Eastern business date of the transactions.',
      currency: 'ISO 4217 currency code.',
      transaction_type: 'DEBIT (payin) or CREDIT (payout); null when the raw type had no known meaning.',
      transactions: 'Number of successful transactions.',
      amount_cents: 'Sum of their amounts, cents.',
      fee_cents: 'Sum of their merchant fees, cents (missing fees count as 0).',
      net_cents:
        'Payins minus payouts minus fees, cents: what the day adds to the merchant balance for this type.',
    },
  },
  {
    name: 'open_discrepancies',
    comment:
      'Discrepancies not resolved by later data (open or acknowledged), with their age in days. The morning worklist.',
    query: `
      select discrepancy_id, kind, rule, business_date, transaction_id, merchant_transaction_id,
             return_transaction_id, currency, expected_amount_cents, actual_amount_cents, difference_cents,
             status, first_seen_at, last_seen_at, acknowledged_at, acknowledged_by, note,
             (current_date - business_date) as age_days
      from discrepancies
      where resolved_at is null`,
    columns: {
      discrepancy_id: 'Identifier (discrepancies.discrepancy_id).',
      kind: 'What is wrong (see README, Reconciliation).',
      rule: 'Matching rule that found it.',
      business_date: 'Eastern business date it belongs to.',
      transaction_id: 'Provider transaction ID concerned.',
      merchant_transaction_id: 'Merchant transaction ID concerned.',
      return_transaction_id: 'Return transaction ID concerned.',
      currency: 'ISO 4217 currency code.',
      expected_amount_cents: 'Expected amount, cents.',
      actual_amount_cents: 'Actual amount, cents.',
      difference_cents: 'actual minus expected, cents.',
      status: 'open or acknowledged.',
      first_seen_at: 'When a run first found it (UTC).',
      last_seen_at: 'When a run last found it (UTC).',
      acknowledged_at: 'When an analyst acknowledged it (UTC).',
      acknowledged_by: 'Who acknowledged it.',
      note: "The analyst's note.",
      age_days: 'Days since the business date (today in the session time zone).',
    },
  },
  {
    name: 'returns_with_originals',
    comment:
      'Every provider return joined to the transaction it returns and to the ledger entry that books it, with the return code and the representment (next action) date.',
    query: `
      select r.return_transaction_id, r.original_transaction_id, r.merchant_transaction_id, r.return_code,
             r.amount_cents, r.currency, r.returned_on, r.next_action_date as representment_date,
             r.raw_next_action_date,
             o.transaction_type as original_transaction_type, o.amount_cents as original_amount_cents,
             o.transaction_at as original_transaction_at, o.transaction_on as original_business_date,
             o.status as original_status,
             (r.returned_on - o.transaction_on) as days_to_return,
             m.ledger_merchant_transaction_id
      from provider_returns r
      left join provider_transactions o on o.transaction_id = r.original_transaction_id
      left join return_matches m on m.return_transaction_id = r.return_transaction_id`,
    columns: {
      return_transaction_id: 'Return transaction ID.',
      original_transaction_id: 'Transaction ID of the returned original.',
      merchant_transaction_id: 'Merchant transaction ID of the original.',
      return_code: 'Return code from the consumer bank (code list not shown by the provider).',
      amount_cents: 'Returned amount, cents.',
      currency: 'ISO 4217 currency code of the return.',
      returned_on: 'Date of the return.',
      representment_date: 'Next action (representment) date, when the provider gave one as a date.',
      raw_next_action_date: 'Next action date exactly as reported.',
      original_transaction_type:
        'DEBIT or CREDIT, from the original transaction (null when not in the warehouse).',
      original_amount_cents: 'Amount of the original transaction, cents.',
      original_transaction_at: 'When the original happened (UTC).',
      original_business_date: 'Eastern business date of the original.',
      original_status: 'Canonical status of the original.',
      days_to_return: 'Calendar days from the original business date to the return date.',
      ledger_merchant_transaction_id: 'Ledger RETURN entry that books the return, when matching found one.',
    },
  },
  {
    name: 'notification_delivery',
    comment:
      'For each provider transaction: what the provider says about notifying the merchant (C, S, I) and what the notification history shows (received, when, how many deliveries, confirmed). No personal data.',
    query: `
      select t.transaction_id, t.merchant_transaction_id, t.transaction_on as business_date, t.status,
             t.notify_status, t.transaction_at,
             m.notification_id is not null as received,
             m.first_received_at,
             n.last_received_at, n.delivery_count, n.confirmed_at,
             extract(epoch from (m.first_received_at - t.transaction_at))::bigint as delay_seconds
      from provider_transactions t
      left join notification_matches m on m.kind = 'transaction' and m.target_id = t.transaction_id
      left join notifications n on n.notification_id = m.notification_id`,
    columns: {
      transaction_id: 'Provider transaction ID.',
      merchant_transaction_id: 'Merchant transaction ID.',
      business_date: 'Eastern business date of the transaction.',
      status: 'Canonical status in the report.',
      notify_status: 'Delivery status the provider reports: C completed, S sent, I not sent.',
      transaction_at: 'When the provider received the transaction (UTC).',
      received: 'Whether a notification for it is in the history (after matching ran).',
      first_received_at: 'Earliest receipt of a notification for it (UTC).',
      last_received_at: 'Latest delivery of the matched notification (UTC).',
      delivery_count: 'How many times the matched notification was delivered.',
      confirmed_at: 'When ConfirmTrans accepted our confirmation (UTC).',
      delay_seconds: 'Seconds from the transaction to the first notification.',
    },
  },
];

// Personal data the analyst role may not read (column-level grants leave these out).
const PERSONAL: Record<string, string[]> = {
  legacy_transactions: ['consumer_email', 'bank_account_masked'],
  notifications: ['account_token', 'payload'],
  notification_quarantine: ['body'],
  rejected_rows: ['raw'],
  status_lookups: ['response'],
};

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of tables) {
    const body = [
      ...table.columns.map((col) => `${col.name} ${col.type}`),
      ...(table.constraints ?? []),
    ].join(',\n  ');
    await sql.raw(`create table ${table.name} (\n  ${body}\n)`).execute(db);
    await sql.raw(`comment on table ${table.name} is ${literal(table.comment)}`).execute(db);
    for (const col of table.columns) {
      await sql.raw(`comment on column ${table.name}.${col.name} is ${literal(col.comment)}`).execute(db);
    }
    for (const index of table.indexes ?? []) await sql.raw(index).execute(db);
  }
  await sql
    .raw('create index if not exists return_matches_original_idx on return_matches (original_transaction_id)')
    .execute(db);
  await sql.raw('create index if not exists discrepancies_rule_idx on discrepancies (rule)').execute(db);
  for (const view of views) {
    await sql.raw(`create view ${view.name} as ${view.query}`).execute(db);
    await sql.raw(`comment on view ${view.name} is ${literal(view.comment)}`).execute(db);
    for (const [col, comment] of Object.entries(view.columns)) {
      await sql.raw(`comment on column ${view.name}.${col} is ${literal(comment)}`).execute(db);
    }
  }

  // Roles are cluster-wide and many databases are made from one template: create only when absent,
  // and tolerate a concurrent creation by another database's migration.
  await sql
    .raw(
      `do $$ begin
         if not exists (select from pg_roles where rolname = 'recon_analyst') then
           create role recon_analyst nologin;
         end if;
       exception when duplicate_object or unique_violation then null;
       end $$`,
    )
    .execute(db);
  await sql.raw(`grant usage on schema public to recon_analyst`).execute(db);
  // Every table that exists now: whole-table SELECT, except the personal-data tables, which get
  // SELECT on each column but the personal ones. Columns added later to those tables stay hidden
  // until a migration grants them (the safe default).
  const rows = await sql<{ table_name: string; column_name: string }>`
    select c.table_name, c.column_name from information_schema.columns c
    join information_schema.tables t using (table_schema, table_name)
    where c.table_schema = 'public' and t.table_type = 'BASE TABLE' and c.table_name not like 'kysely_%'
    order by c.table_name, c.ordinal_position`.execute(db);
  const byTable = new Map<string, string[]>();
  for (const r of rows.rows) byTable.set(r.table_name, [...(byTable.get(r.table_name) ?? []), r.column_name]);
  for (const [table, columns] of byTable) {
    const hidden = PERSONAL[table];
    if (!hidden) {
      await sql.raw(`grant select on ${table} to recon_analyst`).execute(db);
    } else {
      const visible = columns.filter((col) => !hidden.includes(col));
      await sql.raw(`grant select (${visible.join(', ')}) on ${table} to recon_analyst`).execute(db);
    }
  }
  for (const view of views) await sql.raw(`grant select on ${view.name} to recon_analyst`).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // The role is cluster-wide (other databases use it): only this database's grants are removed.
  await sql.raw(`revoke all on all tables in schema public from recon_analyst`).execute(db);
  await sql.raw(`revoke usage on schema public from recon_analyst`).execute(db);
  for (const view of [...views].reverse()) await sql.raw(`drop view if exists ${view.name}`).execute(db);
  for (const table of [...tables].reverse()) await sql.raw(`drop table if exists ${table.name}`).execute(db);
  await sql.raw('drop index if exists discrepancies_rule_idx').execute(db);
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
