import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import { FileMigrationProvider, type MigrationResultSet, Migrator } from 'kysely/migration';

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../migrations');

export function createMigrator(db: Kysely<any>): Migrator {
  return new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS_DIR }),
    // Each area has its own time prefix, so a migration can sort before ones an existing database
    // already ran (2026_11_21_0002xx after 0003xx): apply it instead of refusing the database.
    allowUnorderedMigrations: true,
  });
}

/**
 * Applies every pending migration. `migrateToLatest` never throws: its result is checked here and a
 * failure is thrown with the migration that failed, so callers (recon migrate, tests) exit non-zero.
 */
export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResultSet> {
  const result = await createMigrator(db).migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error');
    const message = result.error instanceof Error ? result.error.message : String(result.error);
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${message}`, {
      cause: result.error,
    });
  }
  return result;
}
