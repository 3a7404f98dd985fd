import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { ANALYST_LIMIT_DEFAULTS } from '../analyst-limits.ts';
import {
  ANALYST_LOGIN,
  analystPassword,
  SUPERUSER,
  superuserUrl,
  writeSecretFile,
  type WarehousePaths,
} from './data-dir.ts';
import type { RunningWarehouse } from './postmaster.ts';

/** Connections to the warehouse as its superuser: the clients connected, the passwords and the analyst login. */

/** Every connection of this process names it, so that a command can tell other clients from its own. */
export function applicationName(): string {
  return `recon:${process.pid}`;
}

/** Client sessions connected to the server other than this process's own. */
export async function otherClients(connectionString: string): Promise<number> {
  const client = new pg.Client({
    connectionString,
    application_name: applicationName(),
    connectionTimeoutMillis: 2000,
  });
  client.on('error', () => {});
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      `select count(*) as n from pg_stat_activity
        where backend_type = 'client backend' and pid <> pg_backend_pid() and application_name <> $1`,
      [applicationName()],
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

/**
 * A data directory initialised before passwords were generated has the superuser password
 * `postgres`, which anyone on the machine could guess: it is replaced by a generated one, kept in the
 * data directory, the first time a command uses the server.
 */
export async function rotateLegacyPassword(
  paths: WarehousePaths,
  server: RunningWarehouse,
): Promise<RunningWarehouse> {
  const generated = randomBytes(18).toString('base64url');
  const client = new pg.Client({
    connectionString: server.connectionString,
    application_name: applicationName(),
  });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(`alter role ${SUPERUSER} with password '${generated}'`);
  } finally {
    await client.end();
  }
  writeSecretFile(paths.passwordFile, generated);
  return { ...server, connectionString: superuserUrl(paths, server.port) };
}

/**
 * The analyst login: a LOGIN role that is a member of recon_analyst (created by the migrations), with
 * the password kept in the data directory. Its password is reset to the stored one each time.
 */
export async function ensureAnalystLogin(paths: WarehousePaths, connectionString: string): Promise<void> {
  const password = analystPassword(paths);
  if (!/^[A-Za-z0-9_-]+$/.test(password)) {
    throw new Error(`${paths.analystPasswordFile} holds characters other than A-Z a-z 0-9 _ -: delete it`);
  }
  const client = new pg.Client({ connectionString, application_name: applicationName() });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(`do $$ begin
        if not exists (select from pg_roles where rolname = '${ANALYST_LOGIN}') then
          create role ${ANALYST_LOGIN} login;
        end if;
      end $$`);
    await client.query(`alter role ${ANALYST_LOGIN} with login password '${password}'`);
    await client.query(`grant recon_analyst to ${ANALYST_LOGIN}`);
    // Settings of recon_analyst are not inherited by its members: the login gets the limits itself.
    const limits = ANALYST_LIMIT_DEFAULTS;
    await client.query(
      `alter role ${ANALYST_LOGIN} set statement_timeout = '${limits.statementTimeoutSeconds}s'`,
    );
    await client.query(
      `alter role ${ANALYST_LOGIN} set idle_in_transaction_session_timeout = '${limits.idleInTransactionSeconds}s'`,
    );
  } finally {
    await client.end();
  }
}
