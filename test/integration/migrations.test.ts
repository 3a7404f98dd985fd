import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { FOLDED_MIGRATIONS, LEGACY_MIGRATIONS } from '../../db/legacy-migrations.ts';
import { queryOn } from '../../db/database-on-client.ts';
import { createMigrator } from '../../db/migrate.ts';
import { MIGRATIONS_DIR, pendingMigrations } from '../../db/schema-state.ts';
import { recon, ROOT } from '../support/recon-process.ts';
import { dumpSchema } from '../support/schema-dump.ts';
import { createScratchDatabase, migrateFolder, type ScratchDatabase } from '../support/scratch-warehouse.ts';

/**
 * The folded migrations build exactly the schema of the legacy chain (the committed snapshot, made by
 * `node scripts/schema-snapshot.ts` from test/fixtures/legacy-migrations), and a warehouse migrated by
 * the legacy chain is upgraded by renaming its history, without touching a row.
 */
const LEGACY_DIR = join(ROOT, 'test/fixtures/legacy-migrations');
const SNAPSHOT = readFileSync(join(ROOT, 'test/fixtures/schema/warehouse-schema.txt'), 'utf8');
const LAST_FOLDED = FOLDED_MIGRATIONS.at(-1)!;

const opened: ScratchDatabase[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});
async function scratch(): Promise<ScratchDatabase> {
  const s = await createScratchDatabase(inject('pgAdminUrl'), 'recon_migrations');
  opened.push(s);
  return s;
}

async function history(db: ScratchDatabase['db']): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  return rows.map((r) => r.name);
}

/** Every row of every table, as one fingerprint per table. */
/** Every migration of migrations/, in order: the folded ones, then those written after the fold. */
async function allMigrations(): Promise<string[]> {
  return (await readdir(MIGRATIONS_DIR))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.replace(/\.ts$/, ''))
    .sort();
}

const ADDED_AFTER_FOLD: Record<string, string[]> = {
  // 0015_follow_up_and_time_order: columns whose existing rows get null, false or a value read from the body.
  'public.notification_quarantine': ['transaction_id', 'replayed_at', 'notification_id'],
  'public.row_history': ['refused'],
};

/**
 * Each table's row count and a hash of its rows, leaving out `account` and the other columns that
 * migrations written after the fold add ({@link ADDED_AFTER_FOLD}): nothing else may change.
 */
async function contents(db: ScratchDatabase['db']): Promise<Record<string, string>> {
  const { rows } = await sql<{ name: string }>`
    select n.nspname || '.' || c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where c.relkind = 'r' and n.nspname in ('public','recon_private','recon_work')
      and c.relname not like 'kysely\\_%' order by 1`.execute(db);
  const out: Record<string, string> = {};
  for (const { name } of rows) {
    const r = await sql<{ n: string; h: string | null }>`
      select count(*)::text as n, md5(string_agg(r::text, '|' order by r::text)) as h
      from (select to_jsonb(t) - 'account' - ${sql.val(ADDED_AFTER_FOLD[name] ?? [])}::text[] as r
        from ${sql.raw(name)} t) rows`.execute(db);
    out[name] = `${r.rows[0]!.n}:${r.rows[0]!.h ?? ''}`;
  }
  return out;
}

describe('the folded migrations', () => {
  it('are the first migrations, in order, and nothing in migrations/ sorts before them', async () => {
    const names = (await readdir(MIGRATIONS_DIR))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    expect(names.slice(0, FOLDED_MIGRATIONS.length)).toEqual(FOLDED_MIGRATIONS);
    for (const name of names) expect(name).toMatch(/^\d{4}_[a-z0-9_]+$/);
  });

  it('build exactly the schema of the legacy chain (test/fixtures/schema/warehouse-schema.txt)', async () => {
    const s = await scratch();
    await migrateFolder(s.db, MIGRATIONS_DIR, LAST_FOLDED);
    expect(await dumpSchema(s.db)).toBe(SNAPSHOT);
  });

  it('go down to an empty schema and up again to the same schema', async () => {
    const s = await scratch();
    await migrateFolder(s.db, MIGRATIONS_DIR, LAST_FOLDED);
    const migrator = createMigrator(s.db);
    for (let i = FOLDED_MIGRATIONS.length; i > 0; i--) {
      const r = await migrator.migrateDown();
      expect(r.error).toBeUndefined();
    }
    expect(await history(s.db)).toEqual([]);
    const empty = await dumpSchema(s.db);
    expect(empty).not.toContain('relation ');
    expect(empty).not.toContain('function');
    await migrateFolder(s.db, MIGRATIONS_DIR, LAST_FOLDED);
    expect(await dumpSchema(s.db)).toBe(SNAPSHOT);
  });
});

describe('a warehouse migrated by the legacy chain', () => {
  it('is upgraded by `recon migrate` without touching a row; a second migrate changes nothing', async () => {
    const s = await scratch();
    await migrateFolder(s.db, LEGACY_DIR);
    expect(await history(s.db)).toEqual([...LEGACY_MIGRATIONS].sort());
    await sql`insert into loads (source, environment, origin, format, status, rows_read, rows_loaded)
      values ('report-transactions', 'staging', 'file', 'report-json', 'committed', 1, 1)`.execute(s.db);
    await sql`insert into provider_transactions (transaction_id, merchant_transaction_id, transaction_type,
        raw_transaction_type, status, raw_status, amount_cents, currency, transaction_on, source, load_id,
        first_load_id, raw)
      values ('T1', 'M1', 'DEBIT', 'DEBIT', 'SUCCESSFUL', 'SUCCESSFUL', 1234, 'CAD', '2026-04-01',
        'report-transactions', 1, 1, '{"transactionId":"T1"}')`.execute(s.db);
    await sql`insert into merchant_ledger (merchant_transaction_id, transaction_type, amount_cents, currency,
        status, booked_at) values ('M1', 'DEBIT', 1234, 'CAD', 'SUCCESSFUL', '2026-04-01T12:00:00Z')`.execute(
      s.db,
    );
    await sql`insert into discrepancies (discrepancy_key, kind, rule, transaction_id, business_date, currency,
        expected_amount_cents, actual_amount_cents, difference_cents)
      values ('amount_mismatch:T1', 'amount_mismatch', 'amount', 'T1', '2026-04-01', 'CAD', 1234, 1200, -34)`.execute(
      s.db,
    );
    await sql`insert into notification_quarantine (kind, reason, body, raw_body)
      values ('transaction', 'not JSON', 'x', '\\x78')`.execute(s.db);
    const schema = await dumpSchema(s.db);
    const before = await contents(s.db);
    expect(before['public.discrepancy_totals']).toMatch(/^1:/);

    const first = await recon(s.connectionString, ['migrate']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const later = (await allMigrations()).slice(FOLDED_MIGRATIONS.length);
    expect(first.stdout).toBe(
      `recorded the warehouse's 17 migrations of the previous release as ${FOLDED_MIGRATIONS.join(', ')} (schema unchanged)\n` +
        (later.length
          ? `applied ${later.length} migration(s):\n${later.map((m) => `  ${m}\n`).join('')}`
          : 'warehouse is up to date\n'),
    );
    expect(await history(s.db)).toEqual(await allMigrations());
    // Tables created by later migrations start empty; every table that was there keeps its rows, but
    // the sign-in failure counts, which 0017 replaces by its throttle (short-lived state, no record).
    const DROPPED = ['public.workbench_sign_in_failures'];
    const kept = (all: Record<string, string>) =>
      Object.fromEntries(Object.keys(before).map((k) => [k, DROPPED.includes(k) ? before[k] : all[k]]));
    expect(kept(await contents(s.db))).toEqual(before);
    if (later.length === 0) expect(await dumpSchema(s.db)).toBe(schema);
    const upgraded = await dumpSchema(s.db);

    const second = await recon(s.connectionString, ['migrate']);
    expect([second.code, second.stdout, second.stderr]).toEqual([0, 'warehouse is up to date\n', '']);
    expect(await history(s.db)).toEqual(await allMigrations());
    expect(kept(await contents(s.db))).toEqual(before);
    expect(await dumpSchema(s.db)).toBe(upgraded);
  });

  it('counts as the folded migrations before the upgrade: only later migrations are pending', async () => {
    const s = await scratch();
    await migrateFolder(s.db, LEGACY_DIR);
    expect(await pendingMigrations(queryOn(s.db))).toEqual(
      (await allMigrations()).slice(FOLDED_MIGRATIONS.length),
    );
    expect(await history(s.db)).toEqual([...LEGACY_MIGRATIONS].sort());
  });
});

describe('a warehouse whose legacy history stopped part way', () => {
  it('is refused with one line and exit 2 by recon migrate and by any command, and left as it is', async () => {
    const s = await scratch();
    await migrateFolder(s.db, LEGACY_DIR, '2026_11_23_000300_personal_data_for_pipeline_only');
    const applied = await history(s.db);
    expect(applied).toHaveLength(12);
    const schema = await dumpSchema(s.db);
    for (const args of [['migrate'], ['report', '--from', '2026-04-01', '--to', '2026-04-02']]) {
      const r = await recon(s.connectionString, args);
      expect(r.code, args[0]).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        'recon: the warehouse was migrated by an earlier release and stopped part way (12 of 17 of its migrations applied, 2026_11_23_000600_quarantine_raw_bytes missing): run `recon migrate` of the previous release first, then this one\n',
      );
    }
    expect(await history(s.db)).toEqual(applied);
    expect(await dumpSchema(s.db)).toBe(schema);
  });
});
