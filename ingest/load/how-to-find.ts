import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Target } from './targets.ts';

/** How the merge of staged rows is to find the stored rows they replace. */
export interface HowToFind {
  /** No staged key can be stored yet: every staged row is new, and nothing needs probing. */
  readonly allNew: boolean;
  /** Find stored rows by one index probe per staged row rather than by a join over the whole table. */
  readonly probe: boolean;
}

/** A table this many times the size of the staged rows is probed by index rather than joined whole. */
const PROBE_SIZE_RATIO = 3;

/**
 * `allNew`: whether every key staged in `staging` sorts after every key the account has in the
 * target (the key is (account, id)): two index-ordered reads. Exact under the merge's table lock
 * (`lockStatement`), which keeps other loads from inserting meanwhile. `probe`: whether the target is
 * more than {@link PROBE_SIZE_RATIO} times the size of the staged rows.
 */
export async function howToFind(db: Db, t: Target, staging: string, account: string): Promise<HowToFind> {
  const key = sql.ref(t.key);
  const r = await sql<{ after: boolean | null; larger: boolean }>`select
    (select min(${key}) from ${sql.table(staging)})
      > coalesce((select max(${key}) from ${sql.table(t.table)} where account = ${account}), '') as after,
    pg_relation_size(${t.table}::regclass) > ${PROBE_SIZE_RATIO} * pg_relation_size(${staging}::regclass) as larger`.execute(
    db,
  );
  const row = r.rows[0];
  // Ledger files name each row's account: the load's account alone does not bound their keys.
  return { allNew: !t.accountPerRow && row?.after === true, probe: row?.larger === true };
}
