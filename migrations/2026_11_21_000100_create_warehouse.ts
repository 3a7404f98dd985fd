import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

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

const c = (name: string, type: string, comment: string): Column => ({ name, type, comment });

const STATUS = `('SUCCESSFUL','PENDING','REJECTED','FAILED','RETURNED')`;
const SOURCES = `('report-transactions','report-returns','legacy-transactions','legacy-returns','legacy-adjustments','ledger')`;
const currency = (col: string, nullable = true) =>
  c(
    col,
    `char(3)${nullable ? '' : ' not null'} check (${col} ~ '^[A-Z]{3}$')`,
    'ISO 4217 currency code, three uppercase letters.',
  );
const lineage = (what: string): Column[] => [
  c(
    'source',
    `text not null check (source in ${SOURCES})`,
    `Source that last set this ${what}: one of the pull sources.`,
  ),
  c(
    'load_id',
    'bigint not null references loads (load_id)',
    `Load that last changed this ${what} (lineage to the report file and window).`,
  ),
  c('first_load_id', 'bigint not null references loads (load_id)', `Load that first brought this ${what}.`),
  c(
    'raw',
    'text not null',
    'The record exactly as the provider sent it (CSV line or JSON object), for audit.',
  ),
  c('created_at', 'timestamptz not null default now()', 'When the warehouse first stored this row (UTC).'),
  c('updated_at', 'timestamptz not null default now()', 'When a load last changed this row (UTC).'),
];

const tables: Table[] = [
  {
    name: 'warehouse_settings',
    comment:
      'One row: the provider environment (staging or production) this warehouse holds. Loads from the other environment are refused, so that test data never mixes with production data.',
    columns: [
      c(
        'singleton',
        'boolean primary key default true check (singleton)',
        'Always true: the table has at most one row.',
      ),
      c(
        'environment',
        `text not null check (environment in ('staging','production'))`,
        'Provider environment of every load in this warehouse.',
      ),
      c(
        'created_at',
        'timestamptz not null default now()',
        'When the first load fixed the environment (UTC).',
      ),
    ],
  },
  {
    name: 'loads',
    comment:
      'One row per attempt to load a report file or provider response: its source, window, counts, checksum and timings. Every warehouse row points to the load that last changed it.',
    columns: [
      c(
        'load_id',
        'bigint generated always as identity primary key',
        'Load identifier, referenced by every loaded row.',
      ),
      c(
        'source',
        `text not null check (source in ${SOURCES})`,
        'What was loaded: a provider report source or the merchant ledger.',
      ),
      c(
        'environment',
        `text not null check (environment in ('staging','production'))`,
        'Provider environment the data came from.',
      ),
      c(
        'origin',
        `text not null check (origin in ('file','pull','workflow','direct'))`,
        'How the data arrived: a file given to recon import, recon pull, a Temporal workflow, or a direct write.',
      ),
      c(
        'format',
        `text not null check (format in ('legacy','report-json','report-csv','ledger-csv','ledger-ndjson'))`,
        'File format as given to --format (or detected for the ledger).',
      ),
      c('query_type', 'text', 'Legacy query type (1, 4, 5, 6) or report query type (TRANSACTION, RETURN).'),
      c(
        'response_fields',
        'text',
        'Legacy response_fields selection, comma-separated field numbers, when not the default.',
      ),
      c('file_name', 'text', 'File name or request description the data was read from.'),
      c(
        'file_sha256',
        `char(64) check (file_sha256 ~ '^[0-9a-f]{64}$')`,
        'SHA-256 of the bytes as received (before unzipping), hex.',
      ),
      c('file_bytes', 'bigint check (file_bytes >= 0)', 'Size in bytes of the data as received.'),
      c('zipped', 'boolean not null default false', 'Whether the data arrived inside a ZIP archive.'),
      c(
        'window_start',
        'timestamptz',
        'Start of the reporting window this load covers (UTC, inclusive), when known.',
      ),
      c(
        'window_end',
        'timestamptz',
        'End of the reporting window this load covers (UTC, exclusive), when known.',
      ),
      c(
        'status',
        `text not null default 'running' check (status in ('running','committed','failed'))`,
        'running while loading; committed when its rows are in the warehouse; failed when nothing was kept.',
      ),
      c(
        'rows_read',
        'bigint not null default 0 check (rows_read >= 0)',
        'Data records read from the file (header excluded).',
      ),
      c(
        'rows_loaded',
        'bigint not null default 0 check (rows_loaded >= 0)',
        'Records that parsed and validated; rows_read = rows_loaded + rows_rejected.',
      ),
      c(
        'rows_rejected',
        'bigint not null default 0 check (rows_rejected >= 0)',
        'Records sent to rejected_rows.',
      ),
      c(
        'rows_inserted',
        'bigint not null default 0 check (rows_inserted >= 0)',
        'Warehouse rows this load created.',
      ),
      c(
        'rows_updated',
        'bigint not null default 0 check (rows_updated >= 0)',
        'Warehouse rows this load changed (their earlier version is in row_history).',
      ),
      c(
        'rows_unchanged',
        'bigint not null default 0 check (rows_unchanged >= 0)',
        'Loaded records identical to what the warehouse already held.',
      ),
      c('error', 'text', 'Why the load failed, when status is failed.'),
      c('workflow_id', 'text', 'Temporal workflow that ran the load, when it ran under Temporal.'),
      c('started_at', 'timestamptz not null default now()', 'When the load started (UTC).'),
      c('finished_at', 'timestamptz', 'When the load committed or failed (UTC).'),
    ],
    constraints: [
      `constraint loads_counts_add_up check (status <> 'committed' or rows_read = rows_loaded + rows_rejected)`,
      `constraint loads_window_ordered check (window_end is null or window_start is null or window_end > window_start)`,
    ],
    indexes: [
      'create index loads_source_window_idx on loads (source, window_start, window_end)',
      'create index loads_file_sha256_idx on loads (file_sha256)',
    ],
  },
  {
    name: 'rejected_rows',
    comment:
      'Records that could not be parsed or validated, with the line they stood on and why. Nothing is dropped silently.',
    columns: [
      c('rejected_row_id', 'bigint generated always as identity primary key', 'Identifier.'),
      c('load_id', 'bigint not null references loads (load_id)', 'Load that read the record.'),
      c(
        'line_number',
        'bigint not null check (line_number >= 1)',
        'Line of the file where the record starts (1 is the first line, the header if any).',
      ),
      c('raw', 'text not null', 'The record as read (may hold personal data).'),
      c('reason', 'text not null', 'Why it was rejected, in words an operator can act on.'),
      c('created_at', 'timestamptz not null default now()', 'When it was rejected (UTC).'),
    ],
    indexes: ['create index rejected_rows_load_idx on rejected_rows (load_id, line_number)'],
  },
  {
    name: 'provider_transactions',
    comment:
      'Payins (DEBIT) and payouts (CREDIT) as the provider reports them, one row per provider transaction id. Report API rows take precedence over legacy rows for the same id.',
    columns: [
      c('transaction_id', 'text primary key', 'Transaction ID assigned by the provider.'),
      c('merchant_id', 'text', 'Merchant ID (report) or merchant account ID (legacy field 10).'),
      c('merchant_transaction_id', 'text', 'Merchant-assigned transaction ID; joins to merchant_ledger.'),
      c('merchant_user_id', 'text', 'Merchant-assigned consumer ID.'),
      c(
        'product_user_id',
        'text',
        'Provider consumer ID (report productUserId / Internal User ID, legacy field 8).',
      ),
      c(
        'product',
        'text',
        'Product code as reported (IBT for the report API); null for legacy rows, which carry none.',
      ),
      c(
        'transaction_type',
        `text check (transaction_type in ('DEBIT','CREDIT'))`,
        'DEBIT (payin) or CREDIT (payout); null when the raw type code has no known meaning (legacy field 2).',
      ),
      c('raw_transaction_type', 'text not null', 'Transaction type exactly as reported.'),
      c(
        'status',
        `text check (status in ${STATUS})`,
        'Canonical status; null when the raw status has no known meaning.',
      ),
      c('raw_status', 'text not null', 'Status exactly as reported.'),
      c(
        'amount_cents',
        'bigint not null check (amount_cents >= 0)',
        'Amount in cents (legacy implied decimals converted).',
      ),
      c('fee_cents', 'bigint', 'Merchant fee in cents, when reported.'),
      currency('currency', false),
      c(
        'transaction_at',
        'timestamptz',
        'When the provider received the transaction, UTC to the microsecond (legacy: Eastern date and time converted).',
      ),
      c(
        'transaction_on',
        'date not null',
        'Business date of the transaction in Eastern time (America/Toronto).',
      ),
      c(
        'local_time_flag',
        `text check (local_time_flag in ('dst_gap','dst_fold'))`,
        'dst_gap: the Eastern local time did not exist (moved forward by the gap); dst_fold: it happened twice (earlier, daylight offset taken).',
      ),
      c('error_code', 'text', 'Provider error code, if any.'),
      c(
        'error_message',
        'text',
        'Provider error message (report errorMessage, or errorDescription in older samples).',
      ),
      c(
        'notify_status',
        'text',
        'Notification delivery status as reported: C completed, S sent, I not sent (legacy field 12: raw, meaning not shown).',
      ),
      c('region', 'text', 'Consumer province or region (ISO 3166-2:CA).'),
      c('country_code', 'text', 'Country code (ISO 3166-1 alpha-2).'),
      c('payment_method', 'text', 'Payment processing method, e.g. EFT.'),
      c('external_reference', 'text', 'External reference number.'),
      c('device_type', 'text', 'Device type (CSV report).'),
      c('request_type', 'text', 'Request type (CSV report).'),
      ...lineage('transaction'),
    ],
    indexes: [
      'create index provider_transactions_mtid_idx on provider_transactions (merchant_transaction_id)',
      'create index provider_transactions_on_idx on provider_transactions (transaction_on)',
      'create index provider_transactions_at_idx on provider_transactions (transaction_at)',
      `create index provider_transactions_pending_idx on provider_transactions (transaction_at) where status = 'PENDING'`,
      'create index provider_transactions_load_idx on provider_transactions (load_id)',
    ],
  },
  {
    name: 'legacy_transactions',
    comment:
      'Transactions as the legacy query interface reports them (query types 5 and 6), every field kept. Compared with provider_transactions to find source conflicts. Holds personal data (e-mail, masked bank account).',
    columns: [
      c('transaction_id', 'text primary key', 'Field 4: transaction ID assigned by the service.'),
      c('transaction_on', 'date not null', 'Field 1: transaction date (Eastern).'),
      c(
        'raw_transaction_type',
        'text not null',
        'Field 2: transaction type code, raw (values not shown by the provider).',
      ),
      c('merchant_transaction_id', 'text', 'Field 3: merchant-assigned transaction ID.'),
      c(
        'amount_cents',
        'bigint check (amount_cents >= 0)',
        'Field 5: amount, implied decimals converted to cents; null when the field was not selected.',
      ),
      currency('currency'),
      c(
        'status',
        `text check (status in ${STATUS})`,
        'Canonical status: S is SUCCESSFUL, any other value FAILED (spec 2.10).',
      ),
      c('raw_status', 'text', 'Field 7: status code, raw.'),
      c('internal_user_id', 'text', 'Field 8: internal user ID.'),
      c('fee_cents', 'bigint', 'Field 9: merchant fee in cents.'),
      c('merchant_account_id', 'text', 'Field 10: merchant account ID.'),
      c('error_code', 'text', 'Field 11: error code.'),
      c('raw_notify_status', 'text', 'Field 12: notification status code, raw (values not shown).'),
      c('merchant_user_id', 'text', 'Field 13: merchant-assigned consumer ID.'),
      c('raw_transaction_time', 'text', 'Field 14: transaction time HHMMSS, Eastern, raw.'),
      c(
        'transaction_at',
        'timestamptz',
        'Fields 1 and 14 as a UTC instant; null when field 14 was not selected.',
      ),
      c(
        'local_time_flag',
        `text check (local_time_flag in ('dst_gap','dst_fold'))`,
        'Set when the Eastern local time was skipped (dst_gap) or repeated (dst_fold).',
      ),
      c('country_code', 'text', 'Field 15: country code.'),
      c('consumer_email', 'text', "Field 16: consumer's e-mail address (personal data)."),
      c('bank_account_masked', 'text', 'Field 17: bank account, last four digits shown (personal data).'),
      c('return_code', 'text', 'Field 18: return code of an EFT-routed payout.'),
      c('returned_on', 'date', 'Field 19: return date (query type 6 only).'),
      c('completed_on', 'date', 'Field 20: completion date (only when requested).'),
      c('payment_type', 'text', 'Field 21: payment type used for payins (only when requested).'),
      c(
        'network_reference',
        'text',
        'Field 22: identifier returned by the e-transfer network (only when requested).',
      ),
      c(
        'query_type',
        `text not null check (query_type in ('5','6'))`,
        'Legacy query type the row came from.',
      ),
      c('load_id', 'bigint not null references loads (load_id)', 'Load that last changed this row.'),
      c('first_load_id', 'bigint not null references loads (load_id)', 'Load that first brought this row.'),
      c('raw', 'text not null', 'The CSV line as received.'),
      c('created_at', 'timestamptz not null default now()', 'When first stored (UTC).'),
      c('updated_at', 'timestamptz not null default now()', 'When last changed (UTC).'),
    ],
    indexes: [
      'create index legacy_transactions_mtid_idx on legacy_transactions (merchant_transaction_id)',
      'create index legacy_transactions_on_idx on legacy_transactions (transaction_on)',
    ],
  },
  {
    name: 'provider_returns',
    comment:
      'Returned transactions (report RETURN records and legacy query type 1), one row per return transaction id, linked to the original transaction with return code and representment (next action) date.',
    columns: [
      c(
        'return_transaction_id',
        'text primary key',
        'Transaction ID of the return (report transactionId / Settlement Transaction ID, legacy field 5).',
      ),
      c(
        'original_transaction_id',
        'text',
        'Transaction ID of the returned original (report originalTransactionId / Payment Transaction ID, legacy field 10).',
      ),
      c('merchant_transaction_id', 'text', 'Merchant-assigned transaction ID of the original.'),
      c('merchant_id', 'text', 'Merchant ID.'),
      c('merchant_user_id', 'text', 'Merchant-assigned consumer ID.'),
      c('product_user_id', 'text', 'Provider consumer ID.'),
      c('product', 'text', 'Product code as reported.'),
      c(
        'return_code',
        'text',
        'Return code assigned by the consumer bank (code list not shown by the provider).',
      ),
      c('amount_cents', 'bigint not null check (amount_cents >= 0)', 'Returned amount in cents.'),
      currency('currency', false),
      c(
        'returned_on',
        'date',
        'Date of the return: report reportDate / Settlement Date, legacy field 1 (date last updated).',
      ),
      c('next_action_date', 'date', 'Representment date (nextActionDate), when given as a date.'),
      c('raw_next_action_date', 'text', 'Next action date exactly as reported.'),
      c('settlement_code', 'text', 'Settlement code (report).'),
      c(
        'raw_transaction_type',
        'text',
        'Transaction type as reported (RETURN), or legacy field 2 transaction category (4 means Return).',
      ),
      c('original_transaction_type', 'text', 'Type of the original transaction, e.g. DEBIT.'),
      c('original_transaction_at', 'timestamptz', 'When the original transaction happened (UTC).'),
      c('original_external_reference', 'text', 'External reference of the original transaction.'),
      c('external_reference', 'text', 'External reference of the return.'),
      c('notify_status', 'text', 'Notification delivery status as reported (C, S, I).'),
      c('region', 'text', 'Consumer province or region.'),
      c('country_code', 'text', 'Country code.'),
      c(
        'legacy_field_8',
        'text',
        'Legacy type 1 field 8, kept raw: its meaning is not shown by the provider.',
      ),
      c(
        'legacy_field_9',
        'text',
        'Legacy type 1 field 9, kept raw: its meaning is not shown by the provider.',
      ),
      ...lineage('return'),
    ],
    indexes: [
      'create index provider_returns_original_idx on provider_returns (original_transaction_id)',
      'create index provider_returns_mtid_idx on provider_returns (merchant_transaction_id)',
      'create index provider_returns_on_idx on provider_returns (returned_on)',
    ],
  },
  {
    name: 'provider_adjustments',
    comment:
      'Merchant account adjustments (legacy query type 4). The provider gives them no key: each is identified by a hash of its fields and its occurrence among identical rows of the same report.',
    columns: [
      c('adjustment_id', 'bigint generated always as identity primary key', 'Identifier.'),
      c(
        'adjustment_key',
        'text not null unique',
        'SHA-256 of the normalised fields, then # and the occurrence number among identical rows of one report.',
      ),
      c('transaction_id', 'text', 'Field 4: transaction ID assigned by the service.'),
      c('raw_transaction_type', 'text', 'Field 2: transaction type code, raw (values not shown).'),
      c('adjustment_type', 'text', 'Field 3: adjustment type code, raw (values not shown).'),
      c(
        'amount_cents',
        'bigint not null',
        'Field 5: amount in cents (negative when the provider sends a minus sign).',
      ),
      c('fee_cents', 'bigint', 'Field 7: merchant fee in cents.'),
      currency('currency', false),
      c('adjusted_on', 'date not null', 'Field 1: transaction date (Eastern).'),
      c('merchant_account_id', 'text', 'Field 8: merchant account ID.'),
      c('notes', 'text', 'Field 9: description of the adjustment.'),
      ...lineage('adjustment'),
    ],
    indexes: [
      'create index provider_adjustments_txn_idx on provider_adjustments (transaction_id)',
      'create index provider_adjustments_on_idx on provider_adjustments (adjusted_on)',
    ],
  },
  {
    name: 'merchant_ledger',
    comment:
      "The merchant's book of record: one entry per merchant transaction id, imported with recon ledger import or written directly by the merchant's system (see README, Ledger contract).",
    columns: [
      c(
        'merchant_transaction_id',
        'text primary key check (length(merchant_transaction_id) between 1 and 30)',
        'Merchant-assigned transaction ID (1-30 characters).',
      ),
      c(
        'transaction_type',
        `text not null check (transaction_type in ('DEBIT','CREDIT','RETURN'))`,
        'DEBIT (payin), CREDIT (payout), or RETURN (a booked return of an earlier entry).',
      ),
      c('amount_cents', 'bigint not null check (amount_cents >= 0)', 'Amount in cents.'),
      currency('currency', false),
      c('status', `text not null check (status in ${STATUS})`, 'Status as the merchant booked it.'),
      c('booked_at', 'timestamptz not null', 'When the merchant booked the entry (UTC).'),
      c(
        'transaction_id',
        'text',
        "Provider transaction ID, when the merchant's system knows it (for a RETURN entry: the return transaction id).",
      ),
      c(
        'original_merchant_transaction_id',
        'text',
        'For a RETURN entry: the merchant transaction id of the entry it returns.',
      ),
      c('merchant_user_id', 'text', 'Merchant-assigned consumer ID.'),
      c('product', 'text', 'Product code (IBT) when known; used with the fee schedule.'),
      c('fee_cents', 'bigint', 'Fee the merchant expects to pay, in cents, when booked.'),
      c('description', 'text', 'Free text from the merchant system.'),
      c(
        'load_id',
        'bigint references loads (load_id)',
        'Load that last changed this entry; null for direct writes.',
      ),
      c('created_at', 'timestamptz not null default now()', 'When first stored (UTC).'),
      c('updated_at', 'timestamptz not null default now()', 'When last changed (UTC).'),
    ],
    indexes: [
      'create index merchant_ledger_booked_idx on merchant_ledger (booked_at)',
      'create index merchant_ledger_txn_idx on merchant_ledger (transaction_id)',
      'create index merchant_ledger_original_idx on merchant_ledger (original_merchant_transaction_id)',
    ],
  },
  {
    name: 'notifications',
    comment:
      'Transaction and return notifications received from the provider, one row per distinct body; repeated deliveries of the same body are counted, not stored twice. Holds personal data (account token) in payload and account_token.',
    columns: [
      c('notification_id', 'bigint generated always as identity primary key', 'Identifier.'),
      c(
        'kind',
        `text not null check (kind in ('transaction','return'))`,
        'transaction (TransactionNotification) or return (ReturnNotification).',
      ),
      c(
        'delivery_key',
        `char(64) not null unique check (delivery_key ~ '^[0-9a-f]{64}$')`,
        'SHA-256 of the kind and the canonical body: identical deliveries share it.',
      ),
      c('transaction_id', 'text', 'transaction.transactionId.'),
      c('merchant_transaction_id', 'text', 'merchant.merchantTransactionId.'),
      c('merchant_id', 'text', 'merchant.merchantId.'),
      c('merchant_user_id', 'text', 'merchant.merchantUserId.'),
      c(
        'transaction_type',
        `text check (transaction_type in ('DEBIT','CREDIT'))`,
        'Canonical transaction type; null when raw value unknown.',
      ),
      c('raw_transaction_type', 'text', 'transaction.transactionType as sent.'),
      c(
        'status',
        `text check (status in ${STATUS})`,
        'Canonical status (SUCCESS becomes SUCCESSFUL); null when unknown.',
      ),
      c('raw_status', 'text', 'transaction.transactionStatus as sent.'),
      c(
        'amount_cents',
        'bigint',
        'transaction.transactionAmount read as cents (the unit is not shown by the provider; see raw_amount).',
      ),
      c('raw_amount', 'text', 'transaction.transactionAmount exactly as sent.'),
      c('fee_cents', 'bigint', 'transaction.transactionFee read as cents.'),
      currency('currency'),
      c('error_code', 'text', 'transaction.errorCode.'),
      c('return_code', 'text', 'Return code when the body carries one (not shown by the provider).'),
      c('raw_next_action_date', 'text', 'Next action date when the body carries one, raw.'),
      c('account_token', 'text', 'accountInfo.accountToken (personal data).'),
      c('account_label', 'text', 'accountInfo.accountLabel, masked account number.'),
      c('payload', 'jsonb not null', 'The body as received (personal data).'),
      c('received_at', 'timestamptz not null default now()', 'First delivery (UTC).'),
      c('last_received_at', 'timestamptz not null default now()', 'Latest delivery (UTC).'),
      c(
        'delivery_count',
        'integer not null default 1 check (delivery_count >= 1)',
        'How many times this body was delivered.',
      ),
      c('confirmed_at', 'timestamptz', 'When ConfirmTrans accepted our confirmation.'),
      c('verification_code', 'text', 'verification_code returned by ConfirmTrans.'),
    ],
    indexes: [
      'create index notifications_txn_idx on notifications (transaction_id)',
      'create index notifications_mtid_idx on notifications (merchant_transaction_id)',
      'create index notifications_received_idx on notifications (received_at)',
    ],
  },
  {
    name: 'notification_quarantine',
    comment:
      'Notification bodies that were refused (malformed or outside the field limits), kept with the reason so that nothing sent is lost.',
    columns: [
      c('quarantine_id', 'bigint generated always as identity primary key', 'Identifier.'),
      c('kind', 'text not null', 'Endpoint the body was posted to (transaction or return).'),
      c('reason', 'text not null', 'Why it was refused.'),
      c('body', 'text not null', 'The body as received (personal data).'),
      c('content_type', 'text', 'Content-Type header.'),
      c('remote_address', 'text', 'Address of the caller.'),
      c('received_at', 'timestamptz not null default now()', 'When received (UTC).'),
    ],
  },
  {
    name: 'row_history',
    comment:
      'Earlier versions of provider rows that a later report restated (new status, changed fee...): what it was, when and by which load it changed.',
    columns: [
      c('history_id', 'bigint generated always as identity primary key', 'Identifier.'),
      c('table_name', 'text not null', 'Table of the changed row.'),
      c('row_key', 'text not null', 'Primary key of the changed row.'),
      c('previous', 'jsonb not null', 'The row before the change, all columns.'),
      c('changed_columns', 'text[] not null', 'Columns whose value changed.'),
      c('load_id', 'bigint not null references loads (load_id)', 'Load that made the change.'),
      c('changed_at', 'timestamptz not null default now()', 'When it changed (UTC).'),
    ],
    indexes: ['create index row_history_row_idx on row_history (table_name, row_key, changed_at)'],
  },
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
    ],
    indexes: [
      'create index discrepancies_kind_idx on discrepancies (kind, business_date)',
      `create index discrepancies_open_idx on discrepancies (business_date) where resolved_at is null`,
      'create index discrepancies_txn_idx on discrepancies (transaction_id)',
      'create index discrepancies_mtid_idx on discrepancies (merchant_transaction_id)',
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
        `text not null check (event in ('opened','changed','acknowledged','resolved','reopened'))`,
        'What happened.',
      ),
      c('details', 'jsonb', 'Values before and after, note, or run that caused it.'),
      c('at', 'timestamptz not null default now()', 'When (UTC).'),
    ],
    indexes: ['create index discrepancy_events_discrepancy_idx on discrepancy_events (discrepancy_id, at)'],
  },
  {
    name: 'status_lookups',
    comment:
      'Answers of the transaction status endpoint, asked for transactions still PENDING after the configured age.',
    columns: [
      c('lookup_id', 'bigint generated always as identity primary key', 'Identifier.'),
      c('transaction_id', 'text not null', 'Transaction looked up.'),
      c(
        'status',
        `text check (status in ${STATUS})`,
        'Canonical status answered (RETURNED_WITH_REPRESENTMENT becomes RETURNED).',
      ),
      c('raw_status', 'text', 'transactionStatus as answered.'),
      c('fee_cents', 'bigint', 'transactionFee as answered.'),
      c('error_code', 'text', 'errorCode as answered.'),
      c('return_code', 'text', 'returnCode, when RETURNED.'),
      c('next_action_date', 'date', 'nextActionDate (representment date), when RETURNED.'),
      c('response', 'jsonb', 'The answer without account tokens.'),
      c('error', 'text', 'Why the lookup failed, when it did.'),
      c('looked_up_at', 'timestamptz not null default now()', 'When (UTC).'),
    ],
    indexes: ['create index status_lookups_txn_idx on status_lookups (transaction_id, looked_up_at)'],
  },
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
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [...tables].reverse()) await sql.raw(`drop table if exists ${table.name}`).execute(db);
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
