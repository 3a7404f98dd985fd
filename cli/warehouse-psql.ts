import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createPool } from '../db/pool.ts';
import {
  acquireWarehouse,
  analystUrl,
  ensureAnalystLogin,
  type WarehouseLease,
  warehousePaths,
} from '../db/embedded-warehouse.ts';
import { ensureSchema } from '../db/ensure-schema.ts';
import type { Config } from '../config/config.ts';
import { childEnvironment, findOnPath } from '../config/process-environment.ts';
import { ConfigError } from '../domain/errors.ts';

function findPsql(): string {
  const found = findOnPath('psql', existsSync);
  if (found !== undefined) return found;
  if (existsSync('/usr/bin/psql')) return '/usr/bin/psql';
  throw new ConfigError(
    'psql is not installed: install the PostgreSQL client (e.g. apt-get install postgresql-client), or connect another client with the URL that `recon warehouse url` prints',
  );
}

/**
 * The embedded warehouse of a lease migrated, with its analyst login: what `recon warehouse start` and
 * `recon warehouse psql` both make sure of before anyone connects. Its paths.
 */
export async function readyForAnalysts(
  config: Pick<Config, 'dataDir'>,
  lease: WarehouseLease,
): Promise<ReturnType<typeof warehousePaths>> {
  const pool = createPool(lease.connectionString, 1);
  try {
    await ensureSchema(pool, { embedded: true, connectionString: lease.connectionString });
  } finally {
    await pool.end();
  }
  const paths = warehousePaths(config.dataDir);
  await ensureAnalystLogin(paths, lease.connectionString);
  return paths;
}

/**
 * `recon warehouse psql`: psql on the warehouse, the password passed in its environment (never on its
 * command line). The embedded warehouse is used running, or started for the length of the session.
 * Returns psql's exit code.
 */
export async function runPsql(
  config: Config,
  options: { args: string[]; pipeline: boolean },
): Promise<number> {
  const psql = findPsql();
  let lease: WarehouseLease | undefined;
  try {
    let url = config.databaseUrl;
    if (url === undefined) {
      lease = await acquireWarehouse(config.dataDir);
      const paths = await readyForAnalysts(config, lease);
      url = options.pipeline ? lease.connectionString : analystUrl(paths, lease.server.port);
    }
    const u = new URL(url);
    const env = childEnvironment({
      PGHOST: u.hostname,
      PGPORT: u.port || '5432',
      PGUSER: decodeURIComponent(u.username),
      PGPASSWORD: decodeURIComponent(u.password),
      PGDATABASE: decodeURIComponent(u.pathname.replace(/^\//, '')) || 'postgres',
    });
    const sslmode = u.searchParams.get('sslmode');
    if (sslmode) env.PGSSLMODE = sslmode;
    // psql handles Ctrl-C itself (it cancels the running query): this process only waits for it.
    const ignore = () => {};
    process.on('SIGINT', ignore);
    try {
      return await new Promise<number>((resolve, reject) => {
        const child = spawn(psql, options.args, { stdio: 'inherit', env });
        child.on('error', reject);
        child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 + 2 : 1)));
      });
    } finally {
      process.off('SIGINT', ignore);
    }
  } finally {
    await lease?.release();
  }
}
