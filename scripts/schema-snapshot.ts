import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.ts';
import { startEmbeddedPostgres } from '../db/connect.ts';
import { dumpSchema } from '../test/support/schema-dump.ts';
import { createScratchDatabase, migrateFolder } from '../test/support/scratch-warehouse.ts';

/**
 * Writes the schema that a folder of migrations builds in an empty database (test/support/schema-dump.ts).
 *
 *   node scripts/schema-snapshot.ts                       the committed snapshot, from the legacy chain
 *   node scripts/schema-snapshot.ts --migrations migrations --out -     the current migrations, to stdout
 *
 * Options: --migrations DIR (default test/fixtures/legacy-migrations), --to NAME (stop after that
 * migration), --out FILE or - (default test/fixtures/schema/warehouse-schema.txt). Uses DATABASE_URL's
 * server when set, else a throw-away embedded PostgreSQL.
 */
const root = resolve(fileURLToPath(import.meta.url), '../..');
const { values } = parseArgs({
  options: {
    migrations: { type: 'string', default: join(root, 'test/fixtures/legacy-migrations') },
    to: { type: 'string' },
    out: { type: 'string', default: join(root, 'test/fixtures/schema/warehouse-schema.txt') },
  },
});

let adminUrl = loadConfig().databaseUrl;
let stop = async () => {};
if (!adminUrl) {
  const server = await startEmbeddedPostgres(join(tmpdir(), `recon-schema-snapshot-${process.pid}`), {
    persistent: false,
  });
  adminUrl = server.connectionString;
  stop = server.stop;
}
try {
  const scratch = await createScratchDatabase(adminUrl, 'recon_schema_snapshot');
  try {
    await migrateFolder(scratch.db, values.migrations, values.to);
    const text = await dumpSchema(scratch.db);
    if (values.out === '-') process.stdout.write(text);
    else writeFileSync(values.out, text);
  } finally {
    await scratch.close();
  }
} finally {
  await stop();
}
