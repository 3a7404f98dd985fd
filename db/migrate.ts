import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Kysely, sql } from 'kysely';
import { FileMigrationProvider, type MigrationResultSet, Migrator } from 'kysely/migration';
import { ReconError } from '../domain/errors.ts';

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

/** An external warehouse whose schema is behind the code: the operator runs `recon migrate`. */
export class WarehouseNotMigrated extends ReconError {
  readonly retryable = false;
  readonly pending: readonly string[];
  constructor(where: string, pending: readonly string[]) {
    super(
      `the warehouse ${where} is not migrated (${pending.length} migration(s) pending, first ${pending[0]}): run \`recon migrate\``,
    );
    this.pending = pending;
  }
}

/** Migration names (file names without extension) that the database has not applied. */
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  const names = (await fs.readdir(MIGRATIONS_DIR))
    .filter((f) => /\.(ts|js|mts|mjs)$/.test(f) && !f.endsWith('.d.ts'))
    .map((f) => f.replace(/\.[^.]+$/, ''))
    .sort();
  let applied: Set<string>;
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    applied = new Set(rows.map((r) => r.name));
  } catch (error) {
    // 42P01 undefined_table: nothing was ever migrated.
    if ((error as { code?: string }).code !== '42P01') throw error;
    applied = new Set();
  }
  return names.filter((n) => !applied.has(n));
}

/** host:port/database of a connection string, without its user or password. */
export function describeDatabase(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `at ${url.hostname}:${url.port || '5432'}${url.pathname || '/'}`;
  } catch {
    return 'of DATABASE_URL';
  }
}

/**
 * Commands that need the schema call this first. The embedded warehouse is migrated here (a line on
 * stderr says so); an external one (DATABASE_URL) is never migrated behind the operator's back.
 */
export async function ensureSchema(
  db: Kysely<any>,
  options: { embedded: boolean; connectionString: string; log?: (line: string) => void },
): Promise<void> {
  const pending = await pendingMigrations(db);
  if (pending.length === 0) return;
  if (!options.embedded) throw new WarehouseNotMigrated(describeDatabase(options.connectionString), pending);
  await migrateToLatest(db);
  (options.log ?? ((line) => process.stderr.write(`${line}\n`)))(
    `recon: migrated the embedded warehouse (${pending.length} migration(s) applied)`,
  );
}
