import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.
//
// Reconciliation: the discrepancies and their audit trail, the match tables (one claim per source
// row, enforced by UNIQUE on each side), the contracted fee schedule, the run log, the totals the
// workbench reads, the delivered alerts, the pipeline's private lock, and the analysts' views.
//
// The match tables have no foreign keys: every reconcile run rebuilds them for millions of rows, and
// a foreign key costs a trigger and an index probe per row (most of a run's time on 1M rows). The
// claims stay enforced by the UNIQUE constraints; the referenced rows are only ever replaced by
// upserts (same key), and matching deletes the claims of rows it no longer sees. They are logged:
// unlogged, a crash of the server would empty them and the views analysts read
// (notification_delivery, returns_with_originals) would lose their matches until the next run.
//
// discrepancy_totals: totals by kind and currency of a filter on status, kind, currency and business
// dates, without reading the discrepancies. Triggers append each change as signed deltas
// (insert-only, so runs and people never wait on each other's totals rows); a reconcile run folds the
// deltas of its own dates (compact_discrepancy_totals(from, to)); the argument-less version folds all.
//
// Schema recon_work holds the pipeline's private objects, on which no analyst role has USAGE:
// reconcile runs serialise on a lock of recon_work.reconcile_lock (an advisory lock could be taken by
// any session), and loads create their staging tables there.

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
const currency = (col: string) =>
  c(col, `char(3) check (${col} ~ '^[A-Z]{3}$')`, 'ISO 4217 currency code, three uppercase letters.');

// The worklist's order: per currency, money at stake, age, id.
const WORKLIST = `coalesce(currency, ''), (-stake_cents), coalesce(business_date, 'infinity'::date), discrepancy_id`;

const tables: Table[] = [
  {
    name: 'discrepancies',
    comment:
      'Every problem matching found, one row per problem for its whole life: first seen, amounts, acknowledged by an analyst, resolved by later data. Stable across runs; the audit trail is in discrepancy_events.',
    columns: [
      c('discrepancy_id', 'bigint generated always as identity primary key', 'Identifier.'),
      c(
        'discrepancy_key',
        'text not null unique',
        'Stable identity of the problem: kind and the ids it is about.',
      ),
      c('kind', 'text not null', 'What is wrong: missing_in_ledger, amount_mismatch, ... (see README).'),
      c('rule', 'text not null', 'Name of the matching rule that found it.'),
      c('transaction_id', 'text', 'Provider transaction ID concerned.'),
      c('merchant_transaction_id', 'text', 'Merchant transaction ID concerned.'),
      c('return_transaction_id', 'text', 'Return transaction ID concerned.'),
      c('business_date', 'date', 'Eastern business date the problem belongs to.'),
      currency('currency'),
      c('expected', 'jsonb', 'What the reference side says (values as stored).'),
      c('actual', 'jsonb', 'What the other side says.'),
      c('expected_amount_cents', 'bigint', 'Expected amount in cents, when the problem is about money.'),
      c('actual_amount_cents', 'bigint', 'Actual amount in cents, when the problem is about money.'),
      c('difference_cents', 'bigint', 'actual minus expected, in cents.'),
      c('candidates', 'jsonb', 'Rows the rule considered when it decided.'),
      c(
        'status',
        `text not null default 'open' check (status in ('open','acknowledged','resolved'))`,
        'open, acknowledged by an analyst, or resolved by later data.',
      ),
      c('first_seen_at', 'timestamptz not null default now()', 'When a run first found it (UTC).'),
      c('last_seen_at', 'timestamptz not null default now()', 'When a run last found it (UTC).'),
      c('resolved_at', 'timestamptz', 'When a run found it no longer holds (UTC).'),
      c('acknowledged_at', 'timestamptz', 'When an analyst acknowledged it (UTC).'),
      c('acknowledged_by', 'text', 'Who acknowledged it.'),
      c('note', 'text', "The analyst's note; survives re-runs."),
      c('assignee', 'text', 'Workbench user the discrepancy is assigned to.'),
      c(
        'resolution',
        `text check (resolution in ('accepted','fixed_in_ledger','provider_error'))`,
        'How a person resolved it: accepted, fixed_in_ledger (the next run verifies it and reopens it if still wrong) or provider_error; null when later data resolved it or it is unresolved.',
      ),
      c(
        'resolved_by',
        'text',
        'Who resolved it (a workbench user or token:NAME); null when a run resolved it.',
      ),
      c(
        'stake_cents',
        `bigint generated always as (
          case when kind in ('currency_mismatch','type_mismatch','status_mismatch')
            then abs(coalesce(expected_amount_cents, actual_amount_cents, 0))
            else abs(coalesce(difference_cents, expected_amount_cents, actual_amount_cents, 0)) end) stored`,
        'Money at stake, in cents of currency, as the run summary counts it: the whole amount for currency, type and status mismatches, else the absolute difference, else the amount concerned, else 0. Orders the worklist.',
      ),
    ],
    indexes: [
      'create index discrepancies_kind_idx on discrepancies (kind, business_date)',
      `create index discrepancies_open_idx on discrepancies (business_date) where resolved_at is null`,
      'create index discrepancies_txn_idx on discrepancies (transaction_id)',
      'create index discrepancies_mtid_idx on discrepancies (merchant_transaction_id)',
      'create index discrepancies_rule_idx on discrepancies (rule)',
      // One worklist index per status set, so that a page of any depth is an index range scan from
      // the cursor: unresolved (the default), all, and unresolved of one kind (the usual filter).
      `create index discrepancies_worklist_idx on discrepancies (${WORKLIST}) where resolved_at is null`,
      `create index discrepancies_worklist_all_idx on discrepancies (${WORKLIST})`,
      `create index discrepancies_worklist_kind_idx on discrepancies (kind, ${WORKLIST}) where resolved_at is null`,
      'create index discrepancies_assignee_idx on discrepancies (assignee) where assignee is not null',
      // The worklist's search also matches return transaction ids.
      'create index discrepancies_return_idx on discrepancies (return_transaction_id) where return_transaction_id is not null',
      // The run's check of fixed_in_ledger resolutions reads only those.
      `create index discrepancies_fixed_in_ledger_idx on discrepancies (business_date) where resolution = 'fixed_in_ledger'`,
    ],
  },
  {
    name: 'discrepancy_events',
    comment:
      'Audit trail of discrepancies: every change of state (opened, changed, acknowledged, resolved, reopened) with its details.',
    columns: [
      c('event_id', 'bigint generated always as identity primary key', 'Identifier.'),
      c(
        'discrepancy_id',
        'bigint not null references discrepancies (discrepancy_id)',
        'Discrepancy concerned.',
      ),
      c(
        'event',
        `text not null check (event in ('opened','changed','acknowledged','resolved','reopened','assigned','commented','verified'))`,
        'What happened: opened, changed, resolved, reopened, verified (by a run); acknowledged, assigned, commented, resolved, reopened (by a person).',
      ),
      c('details', 'jsonb', 'Values before and after, note, or run that caused it.'),
      c('at', 'timestamptz not null default now()', 'When (UTC).'),
      c(
        'actor',
        'text',
        'Workbench user (or token:NAME, or cli:NAME) who did it; null when a reconcile run did.',
      ),
    ],
    indexes: ['create index discrepancy_events_discrepancy_idx on discrepancy_events (discrepancy_id, at)'],
  },
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
      c(
        'summary',
        'jsonb',
        'What the run found, when it finished: counts of matches, lifecycle counts, and discrepancies as a list of {kind, currency, count, amount_cents} (amounts per currency, never added across currencies; runs before 2026-11-23 stored {kind: {count, cents}}).',
      ),
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
      c('transaction_id', 'text primary key', 'Provider transaction ID.'),
      c('merchant_transaction_id', 'text not null unique', 'Ledger entry it matched.'),
      c('rule', 'text not null', 'Matching rule that made the match.'),
      c('run_id', 'bigint', 'Run that made the match.'),
      c('matched_at', 'timestamptz not null default now()', 'When the match was made (UTC).'),
    ],
  },
  {
    name: 'return_matches',
    comment:
      'Provider returns linked to the original transaction they return and to the RETURN entry of the merchant ledger that books them. A ledger RETURN entry is claimed by at most one return.',
    columns: [
      c('return_transaction_id', 'text primary key', 'Return transaction ID.'),
      c('original_transaction_id', 'text', 'Original provider transaction, when it is in the warehouse.'),
      c(
        'ledger_merchant_transaction_id',
        'text unique',
        'Ledger RETURN entry booking this return, when found.',
      ),
      c('rule', 'text not null', 'Matching rule that made the link.'),
      c('run_id', 'bigint', 'Run that made the link.'),
      c('matched_at', 'timestamptz not null default now()', 'When the link was made (UTC).'),
    ],
  },
  {
    name: 'notification_matches',
    comment:
      'Notifications matched to the provider transaction or return they announce. UNIQUE on each side: one notification per provider row (the latest distinct body), one provider row per notification.',
    columns: [
      c('notification_id', 'bigint primary key', 'Notification matched.'),
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
      c('run_id', 'bigint', 'Run that made the match.'),
      c('matched_at', 'timestamptz not null default now()', 'When the match was made (UTC).'),
    ],
    constraints: ['constraint notification_matches_target_unique unique (kind, target_id)'],
  },
  {
    name: 'source_matches',
    comment:
      'JSON report transactions paired with the legacy query interface rows of the same transaction id, compared for source conflicts.',
    columns: [
      c('transaction_id', 'text primary key', 'Provider transaction ID (JSON report row).'),
      c('legacy_transaction_id', 'text not null unique', 'Legacy transaction row paired with it.'),
      c('run_id', 'bigint', 'Run that made the pair.'),
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
      c(
        'rounding',
        `text not null default 'half_up' check (rounding in ('half_up','floor'))`,
        'How the percentage part is rounded to the cent: half_up (0.5 cent and more rounds up) or floor (truncated). Amounts are never negative.',
      ),
    ],
    constraints: [
      'primary key (product, transaction_type, currency, valid_from)',
      'constraint fee_schedule_valid_ordered check (valid_to is null or valid_to >= valid_from)',
    ],
  },
  {
    name: 'discrepancy_totals',
    comment:
      'Count and money at stake of discrepancies per business date, kind, currency and status, as signed deltas kept by statement triggers on discrepancies and folded by compact_discrepancy_totals(); the sum of the rows of a key is its total. Read by the workbench totals.',
    columns: [
      c(
        'business_date',
        'date not null',
        "Eastern business date ('infinity' when the discrepancy has none).",
      ),
      c('kind', 'text not null', 'Discrepancy kind.'),
      c('currency', 'char(3) not null', "Currency ('' when the discrepancy has none)."),
      c('status', 'text not null', 'open, acknowledged or resolved.'),
      c('count', 'bigint not null', 'Change in the number of discrepancies of the key (signed).'),
      c('cents', 'bigint not null', 'Change in their money at stake, in cents of currency (signed).'),
    ],
    indexes: [
      'create index discrepancy_totals_key_idx on discrepancy_totals (status, kind, currency, business_date)',
      // The fold of a run's dates reads the range's rows only.
      'create index discrepancy_totals_date_idx on discrepancy_totals (business_date)',
    ],
  },
  {
    name: 'alert_deliveries',
    comment:
      'Alerts delivered to the webhooks of RECON_ALERT_WEBHOOKS, one row per alert and webhook: a retry skips what is here.',
    columns: [
      c(
        'alert_key',
        'text not null check (length(alert_key) between 1 and 200)',
        'What the alert is about: summary:<window workflow run id> (a reconcile run of a window) or failure:<window workflow run id> (a window that failed after its retries).',
      ),
      c(
        'webhook_sha256',
        `char(64) not null check (webhook_sha256 ~ '^[0-9a-f]{64}$')`,
        'SHA-256, hex, of the configured webhook entry (format and URL) of RECON_ALERT_WEBHOOKS; never the URL, which is a secret.',
      ),
      c(
        'kind',
        `text not null check (kind in ('summary','failure'))`,
        'summary (a reconcile run) or failure (a window that failed).',
      ),
      c(
        'reconcile_run_id',
        'bigint',
        'The reconcile run a summary reports (reconcile_runs.run_id); null for a failure.',
      ),
      c('status_code', 'integer not null', 'HTTP status the webhook answered (2xx).'),
      c(
        'attempts',
        'integer not null check (attempts >= 1)',
        'Activity attempt that delivered it (1 on the first try).',
      ),
      c('delivered_at', 'timestamptz not null default now()', 'When the webhook accepted it (UTC).'),
    ],
    constraints: ['primary key (alert_key, webhook_sha256)'],
  },
];
const views: View[] = [
  {
    name: 'daily_settlement_totals',
    comment:
      'Successful provider transactions per Eastern business date, currency and type: how many, how much, the fees and the net. The figures finance checks against the bank statement.',
    // Transactions of unknown type (neither DEBIT nor CREDIT) have no known sign: net_cents leaves
    // them out (null on their row) and the last two columns count them, so nothing is guessed.
    query: `
      select transaction_on as business_date, currency, transaction_type,
             count(*)::bigint as transactions,
             sum(amount_cents)::bigint as amount_cents,
             coalesce(sum(fee_cents), 0)::bigint as fee_cents,
             (case when transaction_type = 'CREDIT' then -sum(amount_cents)
                   when transaction_type = 'DEBIT' then sum(amount_cents) end
               - coalesce(sum(fee_cents), 0))::bigint as net_cents,
             (case when transaction_type in ('DEBIT','CREDIT') then 0 else count(*) end)::bigint as unknown_type_count,
             (case when transaction_type in ('DEBIT','CREDIT') then 0 else sum(amount_cents) end)::bigint as unknown_type_amount_cents
      from provider_transactions
      where status = 'SUCCESSFUL'
      group by transaction_on, currency, transaction_type`,
    columns: {
      business_date: 'Eastern business date of the transactions.',
      currency: 'ISO 4217 currency code.',
      transaction_type:
        'DEBIT (payin) or CREDIT (payout); null when the raw type had no known meaning (counted in unknown_type_count, left out of net_cents).',
      transactions: 'Number of successful transactions.',
      amount_cents: 'Sum of their amounts, cents.',
      fee_cents: 'Sum of their merchant fees, cents (missing fees count as 0).',
      net_cents:
        "Payins minus payouts minus fees, cents, in this row's currency: what the day adds to the merchant balance for this type. Null for transactions of unknown type, whose sign is not known (see unknown_type_count).",
      unknown_type_count:
        'Successful transactions of this row whose type has no known meaning (neither DEBIT nor CREDIT): left out of net_cents, since their sign is unknown; 0 on DEBIT and CREDIT rows.',
      unknown_type_amount_cents:
        "Sum of the amounts of those transactions, cents, in this row's currency, with no sign applied; 0 on DEBIT and CREDIT rows.",
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

const TOTALS_FUNCTIONS = [
  `create function discrepancy_totals_apply() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into discrepancy_totals (business_date, kind, currency, status, count, cents)
        select coalesce(business_date, 'infinity'), kind, coalesce(currency, ''), status, count(*), sum(stake_cents)
        from new_rows group by 1, 2, 3, 4;
      else
        insert into discrepancy_totals (business_date, kind, currency, status, count, cents)
        select coalesce(business_date, 'infinity'), kind, coalesce(currency, ''), status, -count(*), -sum(stake_cents)
        from old_rows group by 1, 2, 3, 4;
      end if;
      return null;
    end $$`,
  `comment on function discrepancy_totals_apply() is 'Appends what an INSERT or DELETE statement on discrepancies changed to discrepancy_totals (statement-level, transition tables).'`,
  `create function discrepancy_totals_change() returns trigger language plpgsql as $$
    begin
      insert into discrepancy_totals (business_date, kind, currency, status, count, cents) values
        (coalesce(old.business_date, 'infinity'), old.kind, coalesce(old.currency, ''), old.status, -1, -old.stake_cents),
        (coalesce(new.business_date, 'infinity'), new.kind, coalesce(new.currency, ''), new.status, 1, new.stake_cents);
      return null;
    end $$`,
  `comment on function discrepancy_totals_change() is 'Appends the change of one updated discrepancy to discrepancy_totals, for rows whose totals key or money at stake changed.'`,
  `create trigger discrepancy_totals_insert after insert on discrepancies referencing new table as new_rows
     for each statement execute function discrepancy_totals_apply()`,
  `create trigger discrepancy_totals_delete after delete on discrepancies referencing old table as old_rows
     for each statement execute function discrepancy_totals_apply()`,
  // Row-level with a WHEN: a run's update of last_seen_at on every row it sees queues nothing.
  `create trigger discrepancy_totals_update after update on discrepancies for each row
     when ((old.business_date, old.kind, old.currency, old.status, old.stake_cents)
       is distinct from (new.business_date, new.kind, new.currency, new.status, new.stake_cents))
     execute function discrepancy_totals_change()`,
  `create function compact_discrepancy_totals() returns void language sql as $$
    with folded as (delete from discrepancy_totals returning *)
    insert into discrepancy_totals (business_date, kind, currency, status, count, cents)
    select business_date, kind, currency, status, sum(count), sum(cents) from folded
    group by 1, 2, 3, 4 having sum(count) <> 0 or sum(cents) <> 0 $$`,
  `comment on function compact_discrepancy_totals() is 'Folds the deltas of discrepancy_totals into one row per key; called at the end of every reconcile run.'`,
  `create function compact_discrepancy_totals(from_date date, to_date date) returns void language sql as $$
    with folded as (
      delete from discrepancy_totals where business_date between from_date and to_date returning *)
    insert into discrepancy_totals (business_date, kind, currency, status, count, cents)
    select business_date, kind, currency, status, sum(count), sum(cents) from folded
    group by 1, 2, 3, 4 having sum(count) <> 0 or sum(cents) <> 0 $$`,
  `comment on function compact_discrepancy_totals(date, date) is 'Folds the deltas of discrepancy_totals of the business dates from_date..to_date into one row per key; called at the end of every reconcile run for its range.'`,
];

const RECON_WORK = [
  'create schema if not exists recon_work',
  'revoke all on schema recon_work from public',
  `comment on schema recon_work is 'The pipeline''s private objects (locks, staging tables of running loads): no analyst role has USAGE on it, so no analyst session can lock them.'`,
  'create table recon_work.reconcile_lock (singleton boolean primary key default true)',
  `comment on table recon_work.reconcile_lock is 'Empty; a reconcile run locks it (EXCLUSIVE, for its transaction) so that runs queue. Only the pipeline role can reach it.'`,
];

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
    .raw('create index return_matches_original_idx on return_matches (original_transaction_id)')
    .execute(db);
  for (const statement of [...TOTALS_FUNCTIONS, ...RECON_WORK]) await sql.raw(statement).execute(db);
  for (const view of views) {
    await sql.raw(`create view ${view.name} as ${view.query}`).execute(db);
    await sql.raw(`comment on view ${view.name} is ${literal(view.comment)}`).execute(db);
    for (const [col, comment] of Object.entries(view.columns)) {
      await sql.raw(`comment on column ${view.name}.${col} is ${literal(comment)}`).execute(db);
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const view of [...views].reverse()) await sql.raw(`drop view if exists ${view.name}`).execute(db);
  await sql.raw('drop schema if exists recon_work cascade').execute(db);
  for (const table of [...tables].reverse()) await sql.raw(`drop table if exists ${table.name}`).execute(db);
  await sql.raw('drop function if exists compact_discrepancy_totals(date, date)').execute(db);
  await sql.raw('drop function if exists compact_discrepancy_totals()').execute(db);
  await sql.raw('drop function if exists discrepancy_totals_change()').execute(db);
  await sql.raw('drop function if exists discrepancy_totals_apply()').execute(db);
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
