import { promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { FileMigrationProvider, Migrator } from 'kysely/migration';
import pg from 'pg';
import { createDatabase } from '../../db/database-on-client.ts';
import { createPool } from '../../db/pool.ts';

/** An empty database on the server of `adminUrl`, for a schema built by a chosen set of migrations. */
export interface ScratchDatabase {
  readonly db: Kysely<any>;
  readonly connectionString: string;
  close(): Promise<void>;
}

export async function createScratchDatabase(
  adminUrl: string,
  prefix = 'recon_scratch',
): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const connectionString = url.toString();
  const db = createDatabase(createPool(connectionString, 2)) as Kysely<any>;
  return {
    db,
    connectionString,
    close: async () => {
      await db.destroy();
      await adminQuery(adminUrl, `drop database if exists ${name} with (force)`);
    },
  };
}

/**
 * Applies the migrations of `folder` in name order, up to and including `upTo` when given (every one
 * otherwise). Throws with the migration that failed.
 */
export async function migrateFolder(db: Kysely<any>, folder: string, upTo?: string): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: path.resolve(folder) }),
  });
  const result = upTo === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(upTo);
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName ?? '(unknown)';
    throw new Error(`migration ${failed} failed: ${String(result.error)}`, { cause: result.error });
  }
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
