import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { typedError } from '../domain/errors.ts';
import { FOLDED_MIGRATIONS, LEGACY_MIGRATIONS } from './legacy-migrations.ts';
import type { Queryable } from './queryable.ts';

// Whether the warehouse's schema is migrated, asked through node-postgres: a command that finds it so
// (every command but the first on a new warehouse) never loads Kysely's migrator (db/migrate.ts).

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../migrations');

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

/** Whether a history holds the legacy migrations: none, or all (throws LegacyHistoryIncomplete otherwise). */
export function classifyHistory(applied: ReadonlySet<string>): 'none' | 'complete' {
  const present = LEGACY_MIGRATIONS.filter((name) => applied.has(name));
  if (present.length === 0) return 'none';
  if (present.length === LEGACY_MIGRATIONS.length) return 'complete';
  const missing = LEGACY_MIGRATIONS.find((name) => !applied.has(name))!;
  throw new LegacyHistoryIncomplete(present.length, missing);
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
export async function pendingMigrations(db: Queryable): Promise<string[]> {
  const names = (await fs.readdir(MIGRATIONS_DIR))
    .filter((f) => /\.(ts|js|mts|mjs)$/.test(f) && !f.endsWith('.d.ts'))
    .map((f) => f.replace(/\.[^.]+$/, ''))
    .sort();
  let applied: Set<string>;
  try {
    const { rows } = await db.query<{ name: string }>('select name from kysely_migration');
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
