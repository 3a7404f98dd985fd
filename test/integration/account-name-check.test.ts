import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { createMigrator } from '../../db/migrate.ts';
import { createTestDatabase } from '../support/database.ts';

// Migration 0012 rewrites the account name check of every table in a cheaper form. It must refuse and
// accept exactly the names the first form did, on every table that has it.

const NAMES: readonly [string, boolean][] = [
  ['default', true],
  ['acme', true],
  ['acme-2', true],
  ['0', true],
  ['a'.repeat(32), true],
  ['a'.repeat(33), false],
  ['', false],
  ['Acme', false],
  ['acme 2', false],
  ['acme_2', false],
  ['défaut', false],
  ['default\n', false],
];

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase(2);
});
afterAll(async () => {
  await h?.close();
});

async function checks(): Promise<{ table: string; def: string; validated: boolean }[]> {
  const r = await sql<{ table: string; def: string; validated: boolean }>`
    select conrelid::regclass::text as table, pg_get_constraintdef(oid) as def, convalidated as validated
    from pg_constraint where conname like '%\\_account\\_name' order by 1`.execute(h.db);
  return r.rows;
}

/** Which of NAMES the check of loads accepts. */
async function accepted(): Promise<Record<string, boolean>> {
  const out: Record<string, boolean> = {};
  for (const [name] of NAMES) {
    try {
      await sql`insert into loads (account, source, environment, origin, format, status)
        values (${name}, 'report-transactions', 'staging', 'direct', 'report-json', 'committed')`.execute(
        h.db,
      );
      out[name] = true;
    } catch (error) {
      expect(String(error)).toContain('loads_account_name');
      out[name] = false;
    }
  }
  return out;
}

describe('the account name check', () => {
  it('is on every table with an account, validated, in the form that spares the regex for default', async () => {
    const rows = await checks();
    const withAccount = await sql<{ table: string }>`
      select c.table_name as table from information_schema.columns c
      join information_schema.tables t using (table_schema, table_name)
      where c.table_schema = 'public' and c.column_name = 'account' and t.table_type = 'BASE TABLE'
      order by 1`.execute(h.db);
    expect(rows.map((r) => r.table).sort()).toEqual(withAccount.rows.map((r) => r.table).sort());
    expect(rows.length).toBeGreaterThanOrEqual(21);
    for (const row of rows) {
      expect(row.validated).toBe(true);
      expect(row.def).toContain(`'default'::text`);
      expect(row.def).not.toContain('{1,32}');
    }
  });

  it('accepts and refuses the same names as the form it replaced (down to 0011, then up again)', async () => {
    const expected = Object.fromEntries(NAMES);
    expect(await accepted()).toEqual(expected);
    const migrator = createMigrator(h.db);
    expect((await migrator.migrateTo('0011_discrepancies_fillfactor')).error).toBeUndefined();
    expect((await checks()).every((c) => c.def.includes('{1,32}'))).toBe(true);
    expect(await accepted()).toEqual(expected);
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    expect((await checks()).every((c) => !c.def.includes('{1,32}'))).toBe(true);
  });
});
