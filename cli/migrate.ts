import type { Command } from 'commander';
import { runWithDatabase } from './run.ts';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('apply the warehouse migrations to DATABASE_URL (or the embedded PostgreSQL)')
    .action(() =>
      runWithDatabase(
        async (handle) => {
          const { migrateToLatest } = await import('../db/migrate.ts');
          const { FOLDED_MIGRATIONS, LEGACY_MIGRATIONS } = await import('../db/legacy-migrations.ts');
          const result = await migrateToLatest(handle.db);
          if (result.legacyHistoryUpgraded) {
            process.stdout.write(
              `recorded the warehouse's ${LEGACY_MIGRATIONS.length} migrations of the previous release as ${FOLDED_MIGRATIONS.join(', ')} (schema unchanged)\n`,
            );
          }
          const applied =
            result.results?.filter((r) => r.status === 'Success').map((r) => r.migrationName) ?? [];
          process.stdout.write(
            applied.length
              ? `applied ${applied.length} migration(s):\n${applied.map((m) => `  ${m}\n`).join('')}`
              : 'warehouse is up to date\n',
          );
        },
        { schema: 'as-is' },
      ),
    );
}
