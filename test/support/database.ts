import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { createDatabase } from '../../db/database-on-client.ts';
import { createPool } from '../../db/pool.ts';
import { withDatabase } from '../global-setup.ts';

/**
 * A fresh, migrated database for one test file (a copy of the run's template). Real PostgreSQL,
 * never a mock. close() drops it.
 */
export async function createTestDatabase(poolSize = 5): Promise<DatabaseHandle> {
  const adminUrl = inject('pgAdminUrl');
  const template = inject('pgTemplate');
  const name = `recon_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `create database ${name} template ${template}`);
  const connectionString = withDatabase(adminUrl, name);
  const pool = createPool(connectionString, poolSize);
  const db = createDatabase(pool);
  return {
    db,
    pool,
    connectionString,
    close: async () => {
      await db.destroy();
      await adminQuery(adminUrl, `drop database if exists ${name} with (force)`);
    },
  };
}

/**
 * The test file's database, opened before its first test and dropped after its last: the handle's
 * members may be read from inside tests and hooks only.
 */
export function useTestDatabase(poolSize = 5): DatabaseHandle {
  let current: DatabaseHandle | undefined;
  beforeAll(async () => {
    current = await createTestDatabase(poolSize);
  });
  afterAll(async () => {
    await current?.close();
  });
  const opened = (): DatabaseHandle => {
    if (!current) throw new Error('the test database opens in beforeAll: read it inside a test or hook');
    return current;
  };
  return {
    get db() {
      return opened().db;
    },
    get pool() {
      return opened().pool;
    },
    get connectionString() {
      return opened().connectionString;
    },
    close: () => opened().close(),
  };
}

async function adminQuery(url: string, text: string): Promise<void> {
  // CREATE DATABASE ... TEMPLATE fails while another session copies the same template: retry briefly.
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(text);
      return;
    } catch (error) {
      if (attempt < 20 && /being accessed by other users/.test(String(error))) {
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
        continue;
      }
      throw error;
    } finally {
      await client.end();
    }
  }
}
