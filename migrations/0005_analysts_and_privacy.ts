import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.
//
// The analysts' read-only role and what it may read. Consumers' personal data (e-mail, bank account
// even masked, account tokens and labels, names, and every raw line, payload or history entry that
// may hold one) is readable only by the pipeline's own role. Each such column carries the marker
// [personal data] in its COMMENT, and each pipeline-only table the marker [pipeline only] in its own;
// the grants of recon_analyst are derived from those marks:
//   - a table marked [pipeline only]: nothing;
//   - a table with a [personal data] column: SELECT on each of its other columns;
//   - any other table, and every view: SELECT.
// Tables created by later migrations are readable by recon_analyst by default (default privileges):
// such a migration revokes what is personal or pipeline-only.
//
// Analysts read the *_redacted views instead of the personal columns: the same rows with personal
// values replaced by the marker, and keyed hashes of e-mails, bank accounts and account tokens so
// that they can still join and count. The hash key lives in the schema recon_private, which
// recon_analyst cannot use; the views read it with their owner's rights.

const MARK = '[personal data]';
const PIPELINE_ONLY = '[pipeline only]';

/** Lower-cased JSON keys (underscores and dashes removed) whose values are personal data. */
const PERSONAL_KEYS = [
  'email',
  'consumeremail',
  'emailaddress',
  'bankaccountmasked',
  'bankaccount',
  'accountnumber',
  'accounttoken',
  'accountlabel',
  'accountmask',
  'obvtoken',
  'firstname',
  'lastname',
  'middlename',
  'fullname',
  'consumername',
  'phonenumber',
  'dob',
  'address',
  'address2',
  'postalcode',
  'driverslicense',
];

/** E-mail addresses, bank accounts in the legacy layout (masked or not), masked labels (****1234). */
const VALUE_PATTERNS = [
  '[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)+',
  '[0-9Xx*]{3}-[0-9Xx*]{5}-[0-9Xx*]{1,24}',
  '[*Xx]{4}[0-9]{4}',
];

const REDACT_FUNCTIONS = [
  // Text of any shape: JSON members of personal keys (quoted string values, as raw JSON lines,
  // bodies and payload text carry them), e-mail addresses, bank account numbers in the legacy
  // layout (3-5-n digits, masked or not) and masked labels such as ****1234.
  // A line with no double quote holds no JSON member, and one that matches none of the value
  // patterns is returned at once: most raw lines are read (views, retention) without a replace.
  // Not STRICT, so that the planner inlines it (null in, null out all the same).
  `create function redact_personal(value text) returns text
     language sql immutable parallel safe as $$
     select case
       when strpos(value, '"') = 0 and value !~ '${VALUE_PATTERNS.join('|')}' then value
       else regexp_replace(regexp_replace(regexp_replace(
         case when strpos(value, '"') = 0 then value else regexp_replace(value,
           '("(?:${PERSONAL_KEYS.map((k) => k.split('').join('[_-]?')).join('|')})"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"', '\\1"${MARK}"', 'gi') end,
         '${VALUE_PATTERNS[0]}', '${MARK}', 'g'),
         '${VALUE_PATTERNS[1]}', '${MARK}', 'g'),
         '${VALUE_PATTERNS[2]}', '${MARK}', 'g')
     end
   $$`,
  `comment on function redact_personal(text) is 'The text with personal data replaced by ${MARK}: JSON members named like personal fields, e-mail addresses, bank account numbers (xxx-xxxxx-n, masked or not) and masked labels (****1234). Idempotent.'`,
  // JSON values: members with a personal key become the marker (null stays null); every string,
  // at any depth, goes through redact_personal (so a raw line inside a row_history entry is redacted).
  `create function redact_personal_json(value jsonb) returns jsonb
     language plpgsql immutable strict parallel safe as $$
   begin
     case jsonb_typeof(value)
       when 'object' then
         return coalesce((
           select jsonb_object_agg(e.key,
             case when lower(regexp_replace(e.key, '[_-]', '', 'g')) = any (array[${PERSONAL_KEYS.map((k) => `'${k}'`).join(',')}])
                       and jsonb_typeof(e.value) <> 'null'
                  then to_jsonb('${MARK}'::text)
                  else redact_personal_json(e.value) end)
           from jsonb_each(value) e), '{}'::jsonb);
       when 'array' then
         return coalesce((
           select jsonb_agg(redact_personal_json(e.value) order by e.ord)
           from jsonb_array_elements(value) with ordinality e(value, ord)), '[]'::jsonb);
       when 'string' then
         return to_jsonb(redact_personal(value #>> '{}'));
       else
         return value;
     end case;
   end $$`,
  // A legacy line, whose personal values are known (its e-mail and bank account columns): those
  // values first, wherever they stand, then the patterns. SQL, so that it is inlined.
  `create function redact_personal_values(value text, email text, account text) returns text
     language sql immutable parallel safe as $$
     select redact_personal(replace(replace(value,
       coalesce(nullif(email, ''), '${MARK}'), '${MARK}'),
       coalesce(nullif(account, ''), '${MARK}'), '${MARK}'))
   $$`,
  `comment on function redact_personal_values(text, text, text) is 'redact_personal, after replacing the row''s own e-mail and bank account wherever they stand in the text.'`,
  // A refused body: JSON is redacted member by member; anything else (not JSON) is not recognisable
  // field by field (a token is just a word), so only its length is shown.
  `create function redact_personal_body(value text) returns text
     language plpgsql immutable strict parallel safe as $$
   begin
     return redact_personal_json(value::jsonb)::text;
   exception when others then
     -- Already cleared (idempotence): keep the length it stated.
     if value like '${MARK} (not JSON, % characters)' then return value; end if;
     return '${MARK} (not JSON, ' || length(value) || ' characters)';
   end $$`,
  `comment on function redact_personal_body(text) is 'A received body with personal data replaced by ${MARK}: JSON through redact_personal_json; text that is not JSON is replaced whole (its length kept). Idempotent.'`,
  `comment on function redact_personal_json(jsonb) is 'The JSON value with personal data replaced by ${MARK}: members named like personal fields, and personal data inside every string (redact_personal). Idempotent.'`,
  // Keyed hash: the key is read by the views (owner's rights), never by the analyst. Nested so that
  // it is not extendable (sha256 of key || value alone is open to length extension).
  `create function personal_hash(value text, key bytea) returns text
     language sql immutable strict parallel safe as $$
     select encode(sha256(key || sha256(key || convert_to(value, 'UTF8'))), 'hex')
   $$`,
  `comment on function personal_hash(text, bytea) is 'Keyed hash (hex) of a personal value: sha256(key || sha256(key || value)). The key is in recon_private.personal_data_key, which recon_analyst cannot read.'`,
];

interface ViewSpec {
  table: string;
  comment: string;
  /** Expressions added after the table's analyst-readable columns, with their comments. */
  extra: [expression: string, column: string, comment: string][];
  /** Joins the hash key when true. */
  keyed?: boolean;
  /** Columns of the table left out of the view although analysts may read them on the table. */
  omit?: string[];
}

const hashed = (what: string) =>
  `Keyed hash of the ${what} (hex; equal values give equal hashes, so analysts can join and count without seeing it). Null when absent.`;
const redacted = (what: string) => `${what} with personal data replaced by ${MARK}.`;

const VIEWS: ViewSpec[] = [
  {
    table: 'legacy_transactions',
    comment:
      'legacy_transactions for analysts: every column but the personal ones; the consumer e-mail and bank account as keyed hashes, the CSV line redacted.',
    keyed: true,
    extra: [
      [
        'personal_hash(lower(t.consumer_email), k.key)',
        'consumer_email_hash',
        hashed('consumer e-mail (lower case)'),
      ],
      ['personal_hash(t.bank_account_masked, k.key)', 'bank_account_hash', hashed('masked bank account')],
      [
        'redact_personal_values(t.raw, t.consumer_email, t.bank_account_masked)',
        'raw_redacted',
        redacted('The CSV line as received'),
      ],
    ],
  },
  {
    table: 'provider_transactions',
    comment: 'provider_transactions for analysts: every column, the raw record redacted.',
    extra: [['redact_personal(t.raw)', 'raw_redacted', redacted('The record as the provider sent it')]],
  },
  {
    table: 'provider_returns',
    comment: 'provider_returns for analysts: every column, the raw record redacted.',
    extra: [['redact_personal(t.raw)', 'raw_redacted', redacted('The record as the provider sent it')]],
  },
  {
    table: 'provider_adjustments',
    comment: 'provider_adjustments for analysts: every column, the raw record redacted.',
    extra: [['redact_personal(t.raw)', 'raw_redacted', redacted('The record as the provider sent it')]],
  },
  {
    table: 'notifications',
    comment:
      'notifications for analysts: every column but the personal ones; the account token as a keyed hash, the body redacted.',
    keyed: true,
    extra: [
      ['personal_hash(t.account_token, k.key)', 'account_token_hash', hashed('account token')],
      ['redact_personal_json(t.payload)', 'payload_redacted', redacted('The body as received')],
    ],
  },
  {
    table: 'notification_quarantine',
    comment: 'notification_quarantine for analysts: the refused body redacted.',
    // The delivery counters are granted on the table itself; the view shows each refused body.
    omit: ['delivery_count', 'last_received_at'],
    extra: [
      [
        'redact_personal_body(t.body)',
        'body_redacted',
        `The body as received with personal data replaced by ${MARK}; a body that is not JSON is replaced whole.`,
      ],
    ],
  },
  {
    table: 'rejected_rows',
    comment: 'rejected_rows for analysts: the rejected record redacted.',
    extra: [['redact_personal(t.raw)', 'raw_redacted', redacted('The record as read')]],
  },
  {
    table: 'row_history',
    comment:
      'row_history for analysts: the earlier version of each row with personal fields and personal data inside raw lines replaced by the marker.',
    extra: [['redact_personal_json(t.previous)', 'previous_redacted', redacted('The row before the change')]],
  },
  {
    table: 'status_lookups',
    comment: 'status_lookups for analysts: the answer redacted (masked account).',
    extra: [['redact_personal_json(t.response)', 'response_redacted', redacted('The answer')]],
  },
];

const viewName = (table: string) => `${table}_redacted`;

export async function up(db: Kysely<any>): Promise<void> {
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
  await sql.raw('grant usage on schema public to recon_analyst').execute(db);

  for (const statement of REDACT_FUNCTIONS) await sql.raw(statement).execute(db);

  await sql.raw('create schema if not exists recon_private').execute(db);
  await sql.raw('revoke all on schema recon_private from public').execute(db);
  await sql
    .raw(
      `comment on schema recon_private is 'Pipeline-only objects (the personal-data hash key). recon_analyst has no usage on it.'`,
    )
    .execute(db);
  await sql
    .raw(
      `create table recon_private.personal_data_key (
         singleton boolean primary key default true check (singleton),
         key bytea not null check (length(key) >= 16),
         created_at timestamptz not null default now())`,
    )
    .execute(db);
  await sql
    .raw(
      `comment on table recon_private.personal_data_key is 'One row: the secret key of personal_hash for this warehouse, random at creation. Changing it changes every hash analysts hold.'`,
    )
    .execute(db);
  // gen_random_uuid draws from the server's strong random source: two of them give 244 random bits.
  await sql
    .raw(
      `insert into recon_private.personal_data_key (key)
       values (decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'))`,
    )
    .execute(db);

  const described = await sql<{
    table_name: string;
    table_comment: string | null;
    column_name: string;
    comment: string | null;
  }>`
    select c.relname as table_name, obj_description(c.oid, 'pg_class') as table_comment,
           a.attname as column_name, col_description(c.oid, a.attnum) as comment
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where n.nspname = 'public' and c.relkind = 'r' and c.relname not like 'kysely_%'
    order by c.relname, a.attnum`.execute(db);
  const byTable = new Map<
    string,
    { table_comment: string | null; column_name: string; comment: string | null }[]
  >();
  for (const r of described.rows) byTable.set(r.table_name, [...(byTable.get(r.table_name) ?? []), r]);
  const isPersonal = (comment: string | null) => (comment ?? '').startsWith(MARK);

  for (const [table, columns] of byTable) {
    if ((columns[0]!.table_comment ?? '').startsWith(PIPELINE_ONLY)) continue;
    if (!columns.some((c) => isPersonal(c.comment))) {
      await sql.raw(`grant select on ${table} to recon_analyst`).execute(db);
      continue;
    }
    const visible = columns.filter((c) => !isPersonal(c.comment)).map((c) => c.column_name);
    await sql.raw(`grant select (${visible.join(', ')}) on ${table} to recon_analyst`).execute(db);
  }

  for (const view of VIEWS) {
    const columns = byTable
      .get(view.table)!
      .filter((c) => !isPersonal(c.comment) && !(view.omit ?? []).includes(c.column_name));
    const select = [
      ...columns.map((c) => `t.${c.column_name}`),
      ...view.extra.map(([expression, column]) => `${expression} as ${column}`),
    ].join(', ');
    const from = view.keyed
      ? `${view.table} t cross join recon_private.personal_data_key k`
      : `${view.table} t`;
    const name = viewName(view.table);
    await sql.raw(`create view ${name} as select ${select} from ${from}`).execute(db);
    await sql.raw(`comment on view ${name} is ${literal(view.comment)}`).execute(db);
    for (const c of columns) {
      await sql.raw(`comment on column ${name}.${c.column_name} is ${literal(c.comment ?? '')}`).execute(db);
    }
    for (const [, column, comment] of view.extra) {
      await sql.raw(`comment on column ${name}.${column} is ${literal(comment)}`).execute(db);
    }
  }
  const views = await sql<{ name: string }>`
    select viewname as name from pg_views where schemaname = 'public' order by 1`.execute(db);
  for (const { name } of views.rows) await sql.raw(`grant select on ${name} to recon_analyst`).execute(db);

  await sql
    .raw('alter default privileges in schema public grant select on tables to recon_analyst')
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // The role is cluster-wide (other databases use it): only this database's grants are removed.
  await sql
    .raw('alter default privileges in schema public revoke select on tables from recon_analyst')
    .execute(db);
  for (const view of [...VIEWS].reverse()) {
    await sql.raw(`drop view if exists ${viewName(view.table)}`).execute(db);
  }
  await sql.raw('revoke all on all tables in schema public from recon_analyst').execute(db);
  // Column grants are not covered by a table-level REVOKE ALL of a table never granted whole.
  const columnGrants = await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.column_privileges
    where grantee = 'recon_analyst' and table_schema = 'public'`.execute(db);
  for (const g of columnGrants.rows) {
    await sql.raw(`revoke all (${g.column_name}) on ${g.table_name} from recon_analyst`).execute(db);
  }
  await sql.raw('revoke usage on schema public from recon_analyst').execute(db);
  await sql.raw('drop schema if exists recon_private cascade').execute(db);
  await sql.raw('drop function if exists personal_hash(text, bytea)').execute(db);
  await sql.raw('drop function if exists redact_personal_values(text, text, text)').execute(db);
  await sql.raw('drop function if exists redact_personal_body(text)').execute(db);
  await sql.raw('drop function if exists redact_personal_json(jsonb)').execute(db);
  await sql.raw('drop function if exists redact_personal(text)').execute(db);
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
