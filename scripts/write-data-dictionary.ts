import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openDatabase } from '../db/connect.ts';
import { createDatabase } from '../db/database-on-client.ts';
import { createPool } from '../db/pool.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { loadConfig, loadDotEnv } from '../config/config.ts';
import { renderDataDictionary } from '../db/dictionary/data-dictionary.ts';

/** Path of the committed dictionary. */
export const DICTIONARY_PATH = resolve(fileURLToPath(import.meta.url), '../../docs/data-dictionary.md');

/**
 * `npm run docs:dictionary`: migrates a scratch database on DATABASE_URL's server (or the embedded
 * one), renders the dictionary from its comments into docs/data-dictionary.md, and drops the scratch
 * database. The warehouse itself is not touched.
 */
async function main(): Promise<void> {
  loadDotEnv();
  const config = loadConfig();
  const admin = await openDatabase(config, { poolSize: 1, schema: 'as-is' });
  const scratch = `recon_dictionary_${process.pid}`;
  const client = new pg.Client({ connectionString: admin.connectionString });
  await client.connect();
  try {
    await client.query(`drop database if exists ${scratch}`);
    await client.query(`create database ${scratch}`);
    const url = new URL(admin.connectionString);
    url.pathname = `/${scratch}`;
    const pool = createPool(url.toString(), 2);
    const db = createDatabase(pool);
    try {
      await migrateToLatest(db);
      writeFileSync(DICTIONARY_PATH, await renderDataDictionary(db));
    } finally {
      await db.destroy();
    }
    process.stdout.write(`wrote ${DICTIONARY_PATH}\n`);
  } finally {
    await client.query(`drop database if exists ${scratch} with (force)`);
    await client.end();
    await admin.close();
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
