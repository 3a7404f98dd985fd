import { promises as fs } from 'node:fs';
import path from 'node:path';
import { type Kysely, sql } from 'kysely';
import { FileMigrationProvider, type MigrationResultSet, Migrator } from 'kysely/migration';
import { FOLDED_MIGRATIONS, LEGACY_MIGRATIONS } from './legacy-migrations.ts';
import { classifyHistory, MIGRATIONS_DIR } from './schema-state.ts';

// Kysely's migrator: imported only by what migrates (recon migrate, a new embedded warehouse through
// db/schema-state.ts, the tests), so that the other commands start without it.

export function createMigrator(db: Kysely<any>): Migrator {
  return new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS_DIR }),
  });
}

/**
 * A warehouse migrated by the legacy chain has the schema of FOLDED_MIGRATIONS: in one transaction
 * its legacy history rows are replaced by the folded names (same timestamp, so Kysely orders them by
 * name), and nothing else is touched. Returns whether it did so; throws LegacyHistoryIncomplete on a
 * partial legacy history.
 */
export async function upgradeLegacyHistory(db: Kysely<any>): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const exists = await sql<{ t: string | null }>`select to_regclass('kysely_migration')::text as t`.execute(
      trx,
    );
    if (exists.rows[0]?.t == null) return false;
    // A concurrent `recon migrate` waits here and then finds the history already renamed.
    await sql`lock table kysely_migration in exclusive mode`.execute(trx);
    const { rows } = await sql<{ name: string; timestamp: string }>`
      select name, timestamp from kysely_migration`.execute(trx);
    if (classifyHistory(new Set(rows.map((r) => r.name))) === 'none') return false;
    const timestamp = rows
      .filter((r) => LEGACY_MIGRATIONS.includes(r.name))
      .map((r) => r.timestamp)
      .reduce((a, b) => (new Date(a).getTime() >= new Date(b).getTime() ? a : b));
    await sql`delete from kysely_migration where name = any(${[...LEGACY_MIGRATIONS]})`.execute(trx);
    for (const name of FOLDED_MIGRATIONS) {
      await sql`insert into kysely_migration (name, timestamp) values (${name}, ${timestamp})`.execute(trx);
    }
    return true;
  });
}

/**
 * Applies every pending migration, after replacing a complete legacy history by the folded names.
 * `migrateToLatest` never throws: its result is checked here and a failure is thrown with the
 * migration that failed, so callers (recon migrate, tests) exit non-zero.
 */
export async function migrateToLatest(
  db: Kysely<any>,
): Promise<MigrationResultSet & { legacyHistoryUpgraded: boolean }> {
  const legacyHistoryUpgraded = await upgradeLegacyHistory(db);
  const result = await createMigrator(db).migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error');
    const message = result.error instanceof Error ? result.error.message : String(result.error);
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${message}`, {
      cause: result.error,
    });
  }
  return { ...result, legacyHistoryUpgraded };
}
