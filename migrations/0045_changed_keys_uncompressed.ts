import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * The key arrays of recon_work.changed_keys are stored uncompressed (storage external: out of line,
 * not compressed) instead of compressed by pglz (issue 30, section 3). The loader notes one row per
 * COPY of new rows, in the COPY's savepoint, with the keys of up to 20,000 rows (two arrays of about
 * 400 kB for a legacy chunk): pglz compressing them was most of that statement, 68-98 ms against
 * 26-34 ms uncompressed for 20,000 transaction ids and 20,000 merchant ids (load 8), while the COPY
 * waits behind it on the load's one connection. The rows live until a reconcile run has read them
 * (reconcile/incremental.ts deletes them), so the space they take is the loads' since the last run.
 */

const ARRAYS = ['transaction_ids', 'merchant_transaction_ids', 'return_transaction_ids'];

const storage = (how: 'external' | 'extended') =>
  `alter table recon_work.changed_keys ${ARRAYS.map((c) => `alter column ${c} set storage ${how}`).join(', ')}`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(storage('external')).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(storage('extended')).execute(db);
}
