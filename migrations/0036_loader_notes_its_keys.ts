import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * The loader notes the keys of the new rows it COPYs itself (issue 30, section 3; docs/architecture.md,
 * "Indexes of the provider tables"): one row of recon_work.changed_keys per COPY, in the COPY's own
 * savepoint, from the keys it has in hand. While it does, it sets `recon.keys_noted` to 'on' (a
 * transaction-local setting, reset after each COPY) and the insert triggers of the three tables it
 * COPYs into return at once instead of reading their transition tables for the same keys again. Every
 * other write (the loader's merges, a person's SQL, a test) is noted by the triggers as before.
 *
 * What that saves is the trigger's scans of its transition table and the array it builds: PostgreSQL
 * still captures the transition rows, whatever the trigger then does (a disabled trigger too), which
 * costs far less (docs/benchmark-record.md §3).
 */

/** The insert triggers the loader's COPYs fire, with the key kind and column of each key (migration 0027). */
const KEYS: Record<string, readonly (readonly [string, string])[]> = {
  provider_transactions: [
    ['transaction_id', 'transaction_id'],
    ['merchant_transaction_id', 'merchant_transaction_id'],
  ],
  legacy_transactions: [['transaction_id', 'transaction_id']],
  provider_returns: [
    ['return_transaction_id', 'return_transaction_id'],
    ['transaction_id', 'original_transaction_id'],
    ['merchant_transaction_id', 'merchant_transaction_id'],
  ],
};

const KINDS = ['transaction_id', 'merchant_transaction_id', 'return_transaction_id'] as const;

/** The insert of one statement's keys from its transition table new_rows, as migration 0027 writes it. */
function insertKeys(keys: readonly (readonly [string, string])[]): string {
  const arrays = KINDS.map((kind) => {
    const columns = keys.filter(([k]) => k === kind).map(([, column]) => column);
    if (columns.length === 0) return 'null::text[]';
    const selects = columns.map((c) => `select ${c}::text as k from new_rows`);
    return `(select array_agg(k) from (${selects.join(' union all ')}) x where k is not null)`;
  });
  return `insert into recon_work.changed_keys (transaction_ids, merchant_transaction_ids, return_transaction_ids)
    select * from (select ${arrays.join(', ')}) a (t, m, r)
    where t is not null or m is not null or r is not null`;
}

async function noteInserts(db: Kysely<any>, skipWhenNoted: boolean): Promise<void> {
  const skip = skipWhenNoted
    ? `if current_setting('recon.keys_noted', true) = 'on' then return null; end if;`
    : '';
  for (const [table, keys] of Object.entries(KEYS)) {
    await sql
      .raw(
        `create or replace function recon_work.note_${table}_insert() returns trigger language plpgsql
          security definer set search_path = pg_catalog, recon_work as $$
        begin
          ${skip}
          ${insertKeys(keys)};
          return null;
        end $$`,
      )
      .execute(db);
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  await noteInserts(db, true);
}

export async function down(db: Kysely<any>): Promise<void> {
  await noteInserts(db, false);
}
