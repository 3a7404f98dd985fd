import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.
//
// The provider's notifications: one row per distinct body received, and the refused bodies, kept
// byte for byte (bytea: invalid UTF-8 and NUL included) and counted per retry of the same body.

interface Column {
  name: string;
  type: string;
  comment: string;
}
interface Table {
  name: string;
  comment: string;
  columns: Column[];
  indexes?: string[];
}

const c = (name: string, type: string, comment: string): Column => ({ name, type, comment });

const MARK = '[personal data]';
const STATUS = `('SUCCESSFUL','PENDING','REJECTED','FAILED','RETURNED')`;
const currency = (col: string) =>
  c(col, `char(3) check (${col} ~ '^[A-Z]{3}$')`, 'ISO 4217 currency code, three uppercase letters.');

const tables: Table[] = [
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
      c('account_token', 'text', `${MARK} accountInfo.accountToken.`),
      c('account_label', 'text', `${MARK} accountInfo.accountLabel, masked account number.`),
      c('payload', 'jsonb not null', `${MARK} The body as received.`),
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
      c(
        'body',
        'text',
        `${MARK} The body as received, as text, when the bytes are valid UTF-8 without NUL; else null (see raw_body).`,
      ),
      c('content_type', 'text', 'Content-Type header.'),
      c('remote_address', 'text', 'Address of the caller.'),
      c('received_at', 'timestamptz not null default now()', 'When received (UTC).'),
      c(
        'raw_body',
        'bytea not null',
        `${MARK} The body exactly as received, byte for byte (invalid UTF-8 and NUL included): what the provider sent.`,
      ),
      c(
        'body_sha256',
        `char(64) check (body_sha256 ~ '^[0-9a-f]{64}$')`,
        `${MARK} SHA-256, hex, of the kind, a newline and the raw bytes (unkeyed, so a guessable body could be confirmed from it): a retry of the same refused body is counted on the same row. Null on rows older than this column that repeat an earlier row.`,
      ),
      c(
        'delivery_count',
        'integer not null default 1 check (delivery_count >= 1)',
        'How many times this refused body was delivered.',
      ),
      c(
        'last_received_at',
        'timestamptz not null default now()',
        'Latest delivery of this refused body (UTC).',
      ),
    ],
    indexes: [
      'create unique index notification_quarantine_sha256_idx on notification_quarantine (body_sha256)',
    ],
  },
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of tables) {
    const body = table.columns.map((col) => `${col.name} ${col.type}`).join(',\n  ');
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
