import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { tableColumns } from '../../db/database.ts';
import { createTestDatabase } from '../support/database.ts';

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
});
afterAll(async () => h.close());

interface ColumnRow {
  table_name: string;
  column_name: string;
  data_type: string;
  is_nullable: 'YES' | 'NO';
  column_default: string | null;
  is_identity: 'YES' | 'NO';
  description: string | null;
}

async function columns(): Promise<ColumnRow[]> {
  const result = await sql<ColumnRow>`
    select c.table_name, c.column_name, c.data_type, c.is_nullable, c.column_default, c.is_identity,
           col_description(format('%I.%I', c.table_schema, c.table_name)::regclass, c.ordinal_position) as description
    from information_schema.columns c
    join information_schema.tables t using (table_schema, table_name)
    where c.table_schema = 'public' and t.table_type = 'BASE TABLE' and c.table_name not like 'kysely_%'
    order by c.table_name, c.ordinal_position`.execute(h.db);
  return result.rows;
}

describe('db/ types agree with the migrations', () => {
  it('has a spec for exactly the tables the migrations create', async () => {
    const migrated = [...new Set((await columns()).map((c) => c.table_name))].sort();
    expect(Object.keys(tableColumns).sort()).toEqual(migrated);
  });

  it('describes every column with its type, nullability and default', async () => {
    const actual: Record<string, Record<string, unknown>> = {};
    for (const c of await columns()) {
      (actual[c.table_name] ??= {})[c.column_name] = {
        pg: c.data_type,
        nullable: c.is_nullable === 'YES',
        defaulted: c.column_default !== null || c.is_identity === 'YES',
      };
    }
    const expected = Object.fromEntries(
      Object.entries(tableColumns).map(([table, cols]) => [
        table,
        Object.fromEntries(Object.entries(cols).map(([name, s]) => [name, { ...s }])),
      ]),
    );
    expect(actual).toEqual(expected);
  });

  it('documents every table and column in the database (COMMENT ON)', async () => {
    const undocumented = (await columns())
      .filter((c) => !c.description)
      .map((c) => `${c.table_name}.${c.column_name}`);
    expect(undocumented).toEqual([]);
    const tables = await sql<{ relname: string }>`
      select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'v', 'p') and c.relname not like 'kysely_%'
        and obj_description(c.oid, 'pg_class') is null`.execute(h.db);
    expect(tables.rows.map((r) => r.relname)).toEqual([]);
  });
});
