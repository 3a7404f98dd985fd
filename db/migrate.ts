import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Kysely, sql } from 'kysely';
import { FileMigrationProvider, type MigrationResultSet, Migrator } from 'kysely/migration';
import { typedError } from '../domain/errors.ts';
import { FOLDED_MIGRATIONS, LEGACY_MIGRATIONS } from './legacy-migrations.ts';

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../migrations');

export function createMigrator(db: Kysely<any>): Migrator {
  return new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS_DIR }),
  });
}

/**
 * A warehouse whose history holds some of the legacy migration names but not all: its schema is
 * between two legacy states that no folded migration builds.
 */
export class LegacyHistoryIncomplete extends typedError('final') {
  constructor(applied: number, firstMissing: string) {
    super(
      `the warehouse was migrated by an earlier release and stopped part way (${applied} of ${LEGACY_MIGRATIONS.length} of its migrations applied, ${firstMissing} missing): run \`recon migrate\` of the previous release first, then this one`,
    );
  }
}

type LegacyHistory = 'none' | 'complete';

function classifyHistory(applied: ReadonlySet<string>): LegacyHistory {
  const present = LEGACY_MIGRATIONS.filter((name) => applied.has(name));
  if (present.length === 0) return 'none';
  if (present.length === LEGACY_MIGRATIONS.length) return 'complete';
  const missing = LEGACY_MIGRATIONS.find((name) => !applied.has(name))!;
  throw new LegacyHistoryIncomplete(present.length, missing);
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

/** An external warehouse whose schema is behind the code: the operator runs `recon migrate`. */
export class WarehouseNotMigrated extends typedError<{ readonly pending: readonly string[] }>('final') {
  constructor(where: string, pending: readonly string[]) {
    super(
      `the warehouse ${where} is not migrated (${pending.length} migration(s) pending, first ${pending[0]}): run \`recon migrate\``,
      { pending },
    );
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
  // A complete legacy history stands for the folded migrations (renamed by the next migrateToLatest).
  if (classifyHistory(applied) === 'complete') applied = new Set([...applied, ...FOLDED_MIGRATIONS]);
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
