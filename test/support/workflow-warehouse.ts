import { sql } from 'kysely';
import type { DatabaseHandle } from '../../db/connect.ts';

/** The warehouse tables a pull writes. */
export const DATA_TABLES = [
  'provider_transactions',
  'provider_returns',
  'provider_adjustments',
  'legacy_transactions',
  'rejected_rows',
] as const;

/**
 * A checksum per data table. `lineage: true` hashes whole rows (a second run must not touch one);
 * `lineage: false` leaves out load ids, identities and timestamps, to compare two databases that
 * loaded the same data through different runs.
 */
export async function tableChecksums(
  h: DatabaseHandle,
  options: { lineage: boolean },
): Promise<Record<string, { rows: number; md5: string | null }>> {
  const out: Record<string, { rows: number; md5: string | null }> = {};
  for (const table of DATA_TABLES) {
    const row = options.lineage
      ? sql`to_jsonb(t)::text`
      : sql`(to_jsonb(t) - 'load_id' - 'first_load_id' - 'created_at' - 'updated_at' - 'adjustment_id' - 'rejected_row_id')::text`;
    const result = await sql<{ rows: number; md5: string | null }>`
      select count(*)::int as rows, md5(string_agg(r, '|' order by r)) as md5
      from (select ${row} as r from ${sql.table(table)} t) x`.execute(h.db);
    out[table] = result.rows[0]!;
  }
  return out;
}
