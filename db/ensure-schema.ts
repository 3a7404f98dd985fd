import type pg from 'pg';
import { describeDatabase, pendingMigrations, WarehouseNotMigrated } from './schema-state.ts';

// Apart from schema-state.ts, which Kysely's migrator (migrate.ts) reads its history's rules from:
// this module imports the migrator, lazily, so that neither imports the other back.

/**
 * Commands that need the schema call this first. The embedded warehouse is migrated here (a line on
 * stderr says so), by Kysely's migrator, imported only then; an external one (DATABASE_URL) is never
 * migrated behind the operator's back.
 */
export async function ensureSchema(
  pool: pg.Pool,
  options: { embedded: boolean; connectionString: string; log?: (line: string) => void },
): Promise<void> {
  const pending = await pendingMigrations(pool);
  if (pending.length === 0) return;
  if (!options.embedded) throw new WarehouseNotMigrated(describeDatabase(options.connectionString), pending);
  const [{ migrateToLatest }, { createDatabase }] = await Promise.all([
    import('./migrate.ts'),
    import('./database-on-client.ts'),
  ]);
  // Not destroyed: that would end the pool, which is the caller's.
  await migrateToLatest(createDatabase(pool));
  (options.log ?? ((line) => process.stderr.write(`${line}\n`)))(
    `recon: migrated the embedded warehouse (${pending.length} migration(s) applied)`,
  );
}
