import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.
//
// The warehouse's loading side: the load log, the provider's records as loaded, the merchant ledger,
// rejected rows, restated versions and the pull cursors.
//
// Lineage (load_id, first_load_id) is not a foreign key on the bulk tables: PostgreSQL checks a foreign
// key with one trigger and one index probe of loads per written row, measured as about 30 % of the
// merge of a 1,000,000-row load. Lineage stays sound without them: the loader writes only the id of its
// own load, whose loads row it committed before staging; loads rows are permanent (the statement-level
// trigger loads_are_permanent refuses DELETE, TRUNCATE and load_id changes); and
// test/integration/load-lineage.test.ts asserts that every lineage id resolves. rejected_rows,
// row_history and pull_cursors keep their foreign keys: they are written for a few rows per load.
//
// Indexes are those a query reads: provider_transactions is scoped by transaction_on, the PENDING
// follow-up reads the partial index on transaction_at, and legacy rows are read by transaction_id.
//
// Comments that begin with [personal data] mark the columns that only the pipeline reads
// (0005_analysts_and_privacy derives the analyst role's grants from them).

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
const MARK = '[personal data]';
const LINEAGE_COMMENT =
  '(loads.load_id). Not a foreign key (its per-row check cost 30 % of a bulk merge): loads rows are permanent (trigger loads_are_permanent), so the id always resolves.';
const loadId = (nullable = false) =>
  c(
    'load_id',
    nullable ? 'bigint' : 'bigint not null',
    `Load that last changed this row ${LINEAGE_COMMENT}${nullable ? ' Null for direct writes.' : ''}`,
  );
const firstLoadId = () =>
  c('first_load_id', 'bigint not null', `Load that first brought this row ${LINEAGE_COMMENT}`);
const UNKNOWN_MASK = c(
  'unknown_mask',
  'bigint',
  'Columns of this row that no load has carried yet (their format does not have the field): null in them means unknown, not empty. Bit n stands for the column whose attnum is n; unknown_column_names(table, unknown_mask) lists their names. A load whose format carries such a column fills it in without that counting as a restatement. Null when every column is known.',
);
const lineage = (what: string, rawComment: string): Column[] => [
  c(
    'source',
    `text not null check (source in ${SOURCES})`,
    `Source that last set this ${what}: one of the pull sources.`,
  ),
  loadId(),
  firstLoadId(),
  c('raw', 'text not null', `${MARK} ${rawComment}`),
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
        `text not null default 'running' check (status in ('running','committed','failed','abandoned'))`,
        'running while loading; committed when its rows are in the warehouse; failed when nothing was kept; abandoned when its process or the database died while it ran (nothing was kept: re-run the load).',
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
      c(
        'owner_pid',
        'integer',
        'Backend pid of the session that holds the load open while it runs; a running load whose session is gone is marked abandoned.',
      ),
      c(
        'owner_backend_start',
        'timestamptz',
        'When that session started (UTC): with owner_pid, identifies it even if the pid is reused.',
      ),
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
      c('raw', 'text not null', `${MARK} The record as read.`),
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
      ...lineage(
        'transaction',
        'The record exactly as the provider sent it (CSV line or JSON object), for audit; a legacy row carries the consumer e-mail and bank account.',
      ),
      UNKNOWN_MASK,
    ],
    indexes: [
      'create index provider_transactions_mtid_idx on provider_transactions (merchant_transaction_id)',
      'create index provider_transactions_on_idx on provider_transactions (transaction_on)',
      `create index provider_transactions_pending_idx on provider_transactions (transaction_at) where status = 'PENDING'`,
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
      c('consumer_email', 'text', `${MARK} Field 16: consumer's e-mail address.`),
      c('bank_account_masked', 'text', `${MARK} Field 17: bank account, last four digits shown.`),
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
      loadId(),
      firstLoadId(),
      c('raw', 'text not null', `${MARK} The CSV line as received (holds fields 16 and 17).`),
      c('created_at', 'timestamptz not null default now()', 'When first stored (UTC).'),
      c('updated_at', 'timestamptz not null default now()', 'When last changed (UTC).'),
      UNKNOWN_MASK,
    ],
    indexes: ['create index legacy_transactions_on_idx on legacy_transactions (transaction_on)'],
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
      ...lineage(
        'return',
        'The record exactly as the provider sent it (CSV line or JSON object), for audit.',
      ),
      UNKNOWN_MASK,
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
      ...lineage('adjustment', 'The record exactly as the provider sent it (CSV line), for audit.'),
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
      loadId(true),
      c('created_at', 'timestamptz not null default now()', 'When first stored (UTC).'),
      c('updated_at', 'timestamptz not null default now()', 'When last changed (UTC).'),
      UNKNOWN_MASK,
    ],
    indexes: [
      'create index merchant_ledger_booked_idx on merchant_ledger (booked_at)',
      'create index merchant_ledger_txn_idx on merchant_ledger (transaction_id)',
      'create index merchant_ledger_original_idx on merchant_ledger (original_merchant_transaction_id)',
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
      c(
        'previous',
        'jsonb not null',
        `${MARK} The row before the change, all columns (raw lines and personal fields included).`,
      ),
      c('changed_columns', 'text[] not null', 'Columns whose value changed.'),
      c('load_id', 'bigint not null references loads (load_id)', 'Load that made the change.'),
      c('changed_at', 'timestamptz not null default now()', 'When it changed (UTC).'),
    ],
    indexes: ['create index row_history_row_idx on row_history (table_name, row_key, changed_at)'],
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
      c('response', 'jsonb', `${MARK} The answer without account tokens (the masked account stays).`),
      c('error', 'text', 'Why the lookup failed, when it did.'),
      c('looked_up_at', 'timestamptz not null default now()', 'When (UTC).'),
    ],
    indexes: ['create index status_lookups_txn_idx on status_lookups (transaction_id, looked_up_at)'],
  },
  {
    name: 'pull_cursors',
    comment:
      'Per pull source and window, the last load the Temporal workflows committed: a retried window skips the sources this run already loaded. Cursor state lives here, never in workflow payloads.',
    columns: [
      c(
        'source',
        `text not null check (source in ('report-transactions','report-returns','legacy-transactions','legacy-returns','legacy-adjustments'))`,
        'Pull source (report-transactions, report-returns, legacy-transactions, legacy-returns, legacy-adjustments).',
      ),
      c('window_from', 'date not null', 'First Eastern calendar day of the window (inclusive).'),
      c('window_to', 'date not null', 'Last Eastern calendar day of the window (inclusive).'),
      c(
        'load_id',
        'bigint not null references loads (load_id)',
        'Last committed load of this source and window.',
      ),
      c(
        'file_sha256',
        `char(64) check (file_sha256 ~ '^[0-9a-f]{64}$')`,
        'SHA-256 of the provider response that load read, hex, when known.',
      ),
      c('rows_loaded', 'bigint not null check (rows_loaded >= 0)', 'Records that load parsed and validated.'),
      c('workflow_id', 'text not null', 'Temporal workflow that committed that load.'),
      c(
        'run_id',
        'text not null',
        'Temporal run of that workflow: a retried activity of the same run skips a committed load.',
      ),
      c('committed_at', 'timestamptz not null default now()', 'When the cursor was last moved (UTC).'),
    ],
    constraints: [
      'primary key (source, window_from, window_to)',
      'constraint pull_cursors_window_ordered check (window_to >= window_from)',
    ],
  },
];

const GUARD = [
  `create function loads_are_permanent() returns trigger language plpgsql as $$
begin
  raise exception 'loads rows are permanent: % on loads refused (warehouse rows point to them by load_id)', tg_op
    using errcode = 'restrict_violation',
          hint = 'to undo a load, load the corrected file again; lineage must keep resolving';
end $$`,
  `comment on function loads_are_permanent() is 'Refuses DELETE, TRUNCATE and load_id changes on loads, so that the lineage columns of the warehouse tables (no foreign keys) always resolve.'`,
  `create trigger loads_are_permanent before delete or truncate or update of load_id on loads
     for each statement execute function loads_are_permanent()`,
  `comment on trigger loads_are_permanent on loads is 'Statement-level guard: loads rows are never deleted nor renumbered (lineage of every warehouse row points to them).'`,
];

// unknown_mask holds a bit per column (bit n: the column whose attnum is n) rather than an array of
// names: nearly every row has unknown columns, and an array of their names made the tables 35-50 %
// larger and the merge slower. attnum never changes for a column, so the bits keep their meaning.
const UNKNOWN_COLUMN_NAMES = [
  `create function unknown_column_names(tbl regclass, mask bigint) returns text[]
    language sql stable parallel safe
    return (select array_agg(a.attname::text order by a.attnum) from pg_attribute a
            where a.attrelid = tbl and a.attnum between 1 and 62 and not a.attisdropped
              and mask & (1::bigint << a.attnum) <> 0)`,
  `comment on function unknown_column_names(regclass, bigint) is 'Names of the columns of table tbl whose bits are set in mask (an unknown_mask): the columns of that row that no load has carried yet.'`,
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
  for (const statement of [...GUARD, ...UNKNOWN_COLUMN_NAMES]) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop function if exists unknown_column_names(regclass, bigint)').execute(db);
  await sql.raw('drop trigger if exists loads_are_permanent on loads').execute(db);
  await sql.raw('drop function if exists loads_are_permanent()').execute(db);
  for (const table of [...tables].reverse()) await sql.raw(`drop table if exists ${table.name}`).execute(db);
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
