import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Environment } from '../../config/config.ts';
import { EnvironmentMismatch } from '../../domain/errors.ts';

/**
 * Fixes the warehouse environment at the first load (the singleton warehouse_settings row) and refuses
 * a load from the other environment. Call inside the transaction that records the load, so a refused
 * load writes nothing.
 */
export async function claimEnvironment(db: Db, environment: Environment, what: string): Promise<void> {
  await sql`insert into warehouse_settings (environment) values (${environment}) on conflict (singleton) do nothing`.execute(
    db,
  );
  const row = await db.selectFrom('warehouse_settings').select('environment').executeTakeFirstOrThrow();
  if (row.environment !== environment) {
    throw new EnvironmentMismatch(
      `refused to load ${what}: it comes from the ${environment} environment but this warehouse holds ${row.environment} data; ` +
        `point DATABASE_URL at a ${environment} warehouse or set RECON_ENVIRONMENT=${row.environment}`,
    );
  }
}
