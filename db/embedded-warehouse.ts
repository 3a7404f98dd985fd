import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  isAlive,
  isSessionPid,
  readLockFile,
  warehousePaths,
  type WarehousePaths,
} from './embedded-warehouse/data-dir.ts';
import {
  findRunningWarehouse,
  startPostmaster,
  stopWarehouse,
  type RunningWarehouse,
} from './embedded-warehouse/postmaster.ts';
import { otherClients, rotateLegacyPassword } from './embedded-warehouse/sessions.ts';
import { otherUsers, registerUser, unregisterUser, withStartLock } from './embedded-warehouse/users.ts';

/**
 * The embedded PostgreSQL of one data directory, as a server that outlives the command that started
 * it when it must, and never twice on the same data.
 *
 * - `postmaster.pid` (written by PostgreSQL itself) says whether a server runs on the data directory,
 *   its pid and its port. A command that finds one alive and answering uses it (never a second
 *   postmaster), whoever started it.
 * - A server started by `recon warehouse start` is a session server (`warehouse-session.json` names its
 *   pid): only `recon warehouse stop` stops it. Any other server is stopped by the last command that
 *   used it (no other client connected). So a server left behind by a killed command is adopted by the
 *   next command, which stops it when it is done, or by `recon warehouse stop`.
 * - The superuser's password is generated at initdb and kept in the data directory (0600), like the
 *   analyst login's (`recon warehouse url`). Data directories initialised before used `postgres`.
 */

export {
  ANALYST_LOGIN,
  analystPassword,
  analystUrl,
  isAlive,
  SUPERUSER,
  superuserUrl,
  warehousePaths,
  type WarehousePaths,
} from './embedded-warehouse/data-dir.ts';
export {
  findRunningWarehouse,
  stopWarehouse,
  WarehouseNotAnswering,
  type RunningWarehouse,
} from './embedded-warehouse/postmaster.ts';
export { applicationName, ensureAnalystLogin, otherClients } from './embedded-warehouse/sessions.ts';

export interface WarehouseLease {
  readonly connectionString: string;
  readonly server: RunningWarehouse;
  /** Started by this call (not found running). */
  readonly started: boolean;
  /** Done with the server: the last user of a server that is not a session server stops it. */
  release(): Promise<void>;
}

/** Leases held by this process, per data directory: only the last release may stop the server. */
const leases = new Map<string, number>();

/**
 * Uses the server running on the data directory, or starts one. `session`: the server becomes a
 * session server (started detached when it is not running yet). `detach`: a server started here runs
 * in a session of its own all the same, for a long-running command that stops on its own signals: the
 * terminal's Ctrl-C then reaches the command alone, which stops the server when it releases it, unless
 * `recon warehouse start` has made it a session server meanwhile. `fresh`: whatever runs is stopped
 * and the data directory's database is deleted first.
 */
export async function acquireWarehouse(
  dataDir: string,
  options: { session?: boolean; detach?: boolean; fresh?: boolean; log?: (message: unknown) => void } = {},
): Promise<WarehouseLease> {
  const paths = warehousePaths(dataDir);
  const say = (line: string) =>
    (options.log ?? ((m: unknown) => process.stderr.write(`${String(m)}\n`)))(line);
  // Holding the start lock: no other command is starting or stopping the server meanwhile.
  const { server: running, started } = await withStartLock(paths, () => findOrStart(paths, options), say);
  leases.set(paths.root, (leases.get(paths.root) ?? 0) + 1);
  let released = false;
  return {
    connectionString: running.connectionString,
    server: running,
    started,
    release: async () => {
      if (released) return;
      released = true;
      const left = (leases.get(paths.root) ?? 1) - 1;
      if (left > 0) {
        leases.set(paths.root, left);
        return;
      }
      leases.delete(paths.root);
      await withStartLock(paths, () => stopUnlessUsed(paths, running), say);
    },
  };
}

async function findOrStart(
  paths: WarehousePaths,
  options: { session?: boolean; detach?: boolean; fresh?: boolean; log?: (message: unknown) => void },
): Promise<{ server: RunningWarehouse; started: boolean }> {
  let session = options.session === true;
  if (options.fresh) {
    const running = await findRunningWarehouse(paths.root).catch(() => undefined);
    if (running?.session) session = true;
    await stopWarehouse(paths.root, { mode: 'fast' });
    rmSync(paths.pgDir, { recursive: true, force: true });
    rmSync(paths.sessionFile, { force: true });
  }
  let server = await findRunningWarehouse(paths.root);
  let started = false;
  if (!server) {
    server = await startPostmaster(paths, {
      detached: session || options.detach === true,
      ...(options.log ? { log: options.log } : {}),
    });
    started = true;
  }
  if (session && !server.session) {
    writeFileSync(
      paths.sessionFile,
      `${JSON.stringify({ pid: server.pid, port: server.port, startedAt: new Date().toISOString() })}\n`,
    );
    server = { ...server, session: true };
  }
  if (!existsSync(paths.passwordFile)) server = await rotateLegacyPassword(paths, server);
  registerUser(paths);
  return { server, started };
}

/** The last user of a server that is not a session server stops it (called holding the start lock). */
async function stopUnlessUsed(paths: WarehousePaths, running: RunningWarehouse): Promise<void> {
  unregisterUser(paths);
  if (isSessionPid(paths, running.pid)) return;
  const lock = readLockFile(paths.pgDir);
  if (lock?.pid !== running.pid || !isAlive(running.pid)) return;
  if (otherUsers(paths).length > 0) return;
  const others = await otherClients(running.connectionString).catch(() => 0);
  if (others === 0) await stopWarehouse(paths.root, { mode: 'smart', timeoutMs: 10_000 }).catch(() => {});
}

/** What `recon warehouse status` prints. */
export async function warehouseStatus(
  dataDir: string,
): Promise<
  | { running: false; paths: WarehousePaths; initialised: boolean }
  | { running: true; paths: WarehousePaths; server: RunningWarehouse; clients: number }
> {
  const paths = warehousePaths(dataDir);
  const server = await findRunningWarehouse(dataDir, { waitMs: 5_000 });
  if (!server) return { running: false, paths, initialised: existsSync(join(paths.pgDir, 'PG_VERSION')) };
  return { running: true, paths, server, clients: await otherClients(server.connectionString) };
}
