import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../db/connect.ts';
import { createDatabase } from '../db/database-on-client.ts';
import { createPool } from '../db/pool.ts';
import { migrateToLatest } from '../db/migrate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Server where each test file creates its own database from the migrated template. */
    pgAdminUrl: string;
    /** Name of the migrated template database. */
    pgTemplate: string;
  }
}

/**
 * One PostgreSQL for the whole run: DATABASE_URL when set, else an embedded server in a temporary
 * directory. The migrations are applied once to a template database; every test file then gets a
 * fresh copy of it (CREATE DATABASE ... TEMPLATE), so tests never depend on each other's data.
 */
export default async function setup(project: TestProject) {
  let adminUrl = process.env.DATABASE_URL;
  let stop = async () => {};
  let dataDir: string | undefined;
  if (!adminUrl) {
    dataDir = join(tmpdir(), `recon-test-pg-${process.pid}`);
    const server = await startEmbeddedPostgres(dataDir, { persistent: false });
    adminUrl = server.connectionString;
    stop = server.stop;
  }
  const template = `recon_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${template}`);
  await admin.query(`create database ${template}`);
  await admin.end();

  const pool = createPool(withDatabase(adminUrl, template), 2);
  const db = createDatabase(pool);
  await migrateToLatest(db);
  await db.destroy();

  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);

  return async () => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(`drop database if exists ${template} with (force)`);
    await client.end();
    await stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
