import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * The roll-forward of a run over changed keys recomputes the days whose items changed, not its whole
 * range (issue 30, section 1; docs/architecture.md). An item that leaves a day (a ledger entry booked
 * anew, a return dated anew, a row deleted) changes that day, and no row names the day afterwards:
 * `recon_work.changed_keys.business_dates` keeps the business dates of the rows each update or delete
 * wrote, before and after, for the four tables whose rows are items of the roll-forward
 * (settlement_items): provider_transactions (transaction_on), provider_returns (returned_on),
 * provider_adjustments (adjusted_on) and merchant_ledger (the Eastern date of booked_at). An
 * adjustment without a transaction id, which carries no key, is now noted by its dates.
 *
 * An inserted row needs no date here: it is in the run's scope by its keys, on the day it counts on
 * now (an adjustment without a transaction id: every run looks at those of its range). The insert
 * triggers stay those of migrations 0027 and 0036 (the loader notes its COPYs' keys itself).
 */

/** Per table: the key kind and column of each key its rows carry (as in 0027), and its date. */
const TABLES: Record<string, { keys: readonly (readonly [string, string])[]; date: string }> = {
  provider_transactions: {
    keys: [
      ['transaction_id', 'transaction_id'],
      ['merchant_transaction_id', 'merchant_transaction_id'],
    ],
    date: 'transaction_on',
  },
  provider_returns: {
    keys: [
      ['return_transaction_id', 'return_transaction_id'],
      ['transaction_id', 'original_transaction_id'],
      ['merchant_transaction_id', 'merchant_transaction_id'],
    ],
    date: 'returned_on',
  },
  provider_adjustments: { keys: [['transaction_id', 'transaction_id']], date: 'adjusted_on' },
  merchant_ledger: {
    keys: [
      ['merchant_transaction_id', 'merchant_transaction_id'],
      ['merchant_transaction_id', 'original_merchant_transaction_id'],
      ['transaction_id', 'transaction_id'],
      ['return_transaction_id', 'transaction_id'],
    ],
    date: `(booked_at at time zone 'America/Toronto')::date`,
  },
};

const KINDS = ['transaction_id', 'merchant_transaction_id', 'return_transaction_id'] as const;

/** 0027's insert of one statement's keys, with the rows' dates when `date` is given. */
function insertKeys(
  keys: readonly (readonly [string, string])[],
  rows: readonly string[],
  date: string | undefined,
): string {
  const arrays = KINDS.map((kind) => {
    const columns = keys.filter(([k]) => k === kind).map(([, column]) => column);
    if (columns.length === 0) return 'null::text[]';
    const selects = rows.flatMap((r) => columns.map((c) => `select ${c}::text as k from ${r}`));
    return `(select array_agg(k) from (${selects.join(' union all ')}) x where k is not null)`;
  });
  if (date === undefined)
    return `insert into recon_work.changed_keys (transaction_ids, merchant_transaction_ids, return_transaction_ids)
    select * from (select ${arrays.join(', ')}) a (t, m, r)
    where t is not null or m is not null or r is not null`;
  const dates = `(select array_agg(distinct d) from (${rows.map((r) => `select ${date} as d from ${r}`).join(' union all ')}) x where d is not null)`;
  return `insert into recon_work.changed_keys (transaction_ids, merchant_transaction_ids, return_transaction_ids, business_dates)
    select * from (select ${arrays.join(', ')}, ${dates}) a (t, m, r, d)
    where t is not null or m is not null or r is not null or d is not null`;
}

async function replaceFunctions(db: Kysely<any>, withDates: boolean): Promise<void> {
  for (const [table, { keys, date }] of Object.entries(TABLES)) {
    for (const [event, rows] of [
      ['delete', ['old_rows']],
      ['update', ['new_rows', 'old_rows']],
    ] as const) {
      await sql
        .raw(
          `create or replace function recon_work.note_${table}_${event}() returns trigger language plpgsql security definer
            set search_path = pg_catalog, recon_work as $$
          begin
            ${insertKeys(keys, rows, withDates ? date : undefined)};
            return null;
          end $$`,
        )
        .execute(db);
    }
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table recon_work.changed_keys add column business_dates date[]`.execute(db);
  await sql`comment on column recon_work.changed_keys.business_dates is 'Business dates of the rows the statement wrote, before and after (provider transactions, returns, adjustments, ledger entries: the items of the roll-forward); a run over changed keys recomputes the roll-forward of these days of its range.'`.execute(
    db,
  );
  await replaceFunctions(db, true);
}

export async function down(db: Kysely<any>): Promise<void> {
  await replaceFunctions(db, false);
  await sql`alter table recon_work.changed_keys drop column business_dates`.execute(db);
}
