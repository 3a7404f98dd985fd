import pg from 'pg';
import { databaseAddress, noteGaveUp } from './connection-errors.ts';

/** Silence after which the command says that it is waiting for the database. */
const WARN_AFTER_MS = 5_000;
const PROBE_EVERY_MS = 1_000;

/** How long a command waits for a database that stopped answering when RECON_DB_TIMEOUT_SECONDS is unset. */
export const DEFAULT_DB_TIMEOUT_SECONDS = 60;

/** Connections whose sockets are cut when the watchdog gives up (pool clients, a load's owner session). */
const live = new Set<pg.Client>();

export function trackClient(client: pg.Client): void {
  live.add(client);
  client.once('end', () => live.delete(client));
}

export function untrackClient(client: pg.Client): void {
  live.delete(client);
}

/** Destroys a client's socket: its pending query fails at once, whatever the server does. */
function cut(client: pg.Client): void {
  const socket = (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream;
  socket?.destroy();
}

export interface Watchdog {
  stop(): Promise<void>;
}

/**
 * For a command that a person waits for: a probe session asks the server `select 1` every second.
 * When no answer came for 5 s, one line on stderr says that the command is waiting for the database
 * (a stalled or overloaded server, a network that drops packets: the command's own queries would hang
 * silently); when the server answers again, one line says so. After `timeoutSeconds` without an
 * answer the watchdog gives up: it cuts every tracked connection, so that the command's pending
 * queries fail, and the command ends with the line of {@link databaseErrorLine}.
 *
 * A slow query does not trip it: the probe runs on its own session, which a busy server still answers.
 */
export function startWatchdog(
  connectionString: string,
  options: { timeoutSeconds: number; write?: (line: string) => void },
): Watchdog {
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const address = databaseAddress(connectionString);
  let probe: pg.Client | undefined;
  let pendingSince: number | undefined;
  let warned = false;
  let stopped = false;
  let busy = false;

  async function ask(): Promise<void> {
    if (busy || stopped) return;
    busy = true;
    pendingSince ??= Date.now();
    try {
      if (!probe) {
        const client = new pg.Client({
          connectionString,
          connectionTimeoutMillis: options.timeoutSeconds * 1000,
        });
        client.on('error', () => {});
        trackClient(client);
        probe = client;
        await client.connect();
      }
      await probe.query('select 1');
      pendingSince = undefined;
      if (warned) write(`recon: the database at ${address} answers again\n`);
      warned = false;
    } catch {
      // Refused or cut: the command's own queries fail as well and say so; try a new session next time.
      const dead = probe;
      probe = undefined;
      if (dead) untrackClient(dead);
      await dead?.end().catch(() => {});
    } finally {
      busy = false;
    }
  }

  const timer = setInterval(() => {
    const waited = pendingSince === undefined ? 0 : Date.now() - pendingSince;
    if (waited >= options.timeoutSeconds * 1000) {
      giveUp();
      return;
    }
    if (waited >= WARN_AFTER_MS && !warned) {
      warned = true;
      write(
        `recon: waiting for the database at ${address}: no answer for ${Math.round(waited / 1000)} s ` +
          `(gives up after ${options.timeoutSeconds} s, RECON_DB_TIMEOUT_SECONDS)\n`,
      );
    }
    void ask();
  }, PROBE_EVERY_MS);
  timer.unref();
  void ask();

  function giveUp(): void {
    stopped = true;
    clearInterval(timer);
    noteGaveUp(connectionString, options.timeoutSeconds);
    for (const client of live) cut(client);
    live.clear();
  }

  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      const client = probe;
      probe = undefined;
      if (client) {
        untrackClient(client);
        // A probe still waiting for a stalled server would wait for ever to end: cut it instead.
        if (pendingSince !== undefined) cut(client);
        else await client.end().catch(() => {});
      }
    },
  };
}
