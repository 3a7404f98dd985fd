/**
 * Where the workbench's heavy reads go (RECON_WORKBENCH_READ_URL): the worklist and its totals, the
 * CSV export, runs, loads and coverage read from a streaming replica of the warehouse when one is
 * configured; sign-in, sessions, tokens, every action and the discrepancy detail stay on the primary.
 *
 * Read-your-writes. A replica replays the primary's WAL a moment late, so an operator who just
 * acknowledged a discrepancy could see it still open in the next worklist. After a principal's write,
 * {@link ReplicaReads.wrote} keeps the primary's WAL insert position (an upper bound of that write's
 * commit record) for that principal, in memory; that principal's reads go to the primary until the
 * replica has replayed past it (`pg_last_wal_replay_lsn()`, asked of the replica on each such read),
 * then back to the replica. The pin is exact rather than a guessed time window: it lasts as long as
 * the replica lags, milliseconds usually, indefinitely when replay stops. Other principals keep reading
 * the replica (they may see the write a moment later, as with any replica). When the position cannot be
 * read, the principal reads the primary for {@link UNKNOWN_POSITION_PIN_MS}. The map is per process:
 * behind a load balancer with several `recon serve` processes, route a session to one process (sticky
 * sessions) for the guarantee to hold across them.
 *
 * Fallback. A read that fails on the replica is run again on the primary; when the primary answers it,
 * the replica is taken to be unavailable: one line in the log, and reads skip it for
 * `retryAfterMs` before trying it again (one more line when it answers again). A read that fails on
 * the primary too fails as it would without a replica. Nothing here changes without a replica.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.ts';

/** How long a principal reads the primary after a write whose WAL position could not be read. */
export const UNKNOWN_POSITION_PIN_MS = 60_000;
/** How long reads skip a replica that failed before trying it again. */
export const REPLICA_RETRY_MS = 15_000;

export interface ReadReplica {
  readonly db: Kysely<Database>;
  /** host:port/database, for the log: never the user or password. */
  readonly address: string;
  /** How long reads skip the replica after it failed (default {@link REPLICA_RETRY_MS}). */
  readonly retryAfterMs?: number;
}

/** The reader: a principal's name, or null (no principal: reads as anyone). */
type Reader = { readonly name: string } | null;

export interface ReplicaReads {
  /** Runs one heavy read where it should go (see the module comment); the result of `read`. */
  read<T>(reader: Reader, read: (db: Kysely<Database>) => Promise<T>): Promise<T>;
  /**
   * The rows of a streamed read (`open` is called with the database to read). Falls back to the
   * primary only before the first row: a stream that breaks later fails as it would on the primary.
   */
  stream<T>(reader: Reader, open: (db: Kysely<Database>) => AsyncIterable<T>): AsyncIterable<T>;
  /** Call after the principal's write committed on the primary, before answering it. Never throws. */
  wrote(reader: Reader): Promise<void>;
}

type Pin = { readonly lsn: string } | { readonly until: number };

export function createReplicaReads(
  primary: Kysely<Database>,
  replica: ReadReplica | undefined,
  log: (line: string) => void = () => {},
): ReplicaReads {
  if (!replica) {
    return {
      read: (_reader, read) => read(primary),
      stream: (_reader, open) => open(primary),
      wrote: async () => {},
    };
  }
  return new RoutedReads(primary, replica, log);
}

/** The reads of a workbench that has a replica: pins after writes, fallback to the primary. */
class RoutedReads implements ReplicaReads {
  readonly #pins = new Map<string, Pin>();
  readonly #retryAfterMs: number;
  #downSince: number | undefined;

  readonly primary: Kysely<Database>;
  readonly replica: ReadReplica;
  readonly log: (line: string) => void;

  constructor(primary: Kysely<Database>, replica: ReadReplica, log: (line: string) => void) {
    this.primary = primary;
    this.replica = replica;
    this.log = log;
    this.#retryAfterMs = replica.retryAfterMs ?? REPLICA_RETRY_MS;
  }

  async read<T>(reader: Reader, read: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    let replicaError: unknown;
    try {
      if (await this.#replicaServes(reader)) {
        const result = await read(this.replica.db);
        this.#answered();
        return result;
      }
    } catch (error) {
      replicaError = error;
    }
    const result = await read(this.primary);
    if (replicaError !== undefined) this.#failed(replicaError);
    return result;
  }

  async *stream<T>(reader: Reader, open: (db: Kysely<Database>) => AsyncIterable<T>): AsyncIterable<T> {
    let fromReplica: AsyncIterator<T> | undefined;
    let first: IteratorResult<T> | undefined;
    let replicaError: unknown;
    try {
      if (await this.#replicaServes(reader)) {
        fromReplica = open(this.replica.db)[Symbol.asyncIterator]();
        first = await fromReplica.next();
        this.#answered();
      }
    } catch (error) {
      replicaError = error;
    }
    if (fromReplica && first) {
      try {
        for (let next = first; !next.done; next = await fromReplica.next()) yield next.value;
      } finally {
        await fromReplica.return?.();
      }
      return;
    }
    let reported = replicaError === undefined;
    for await (const row of open(this.primary)) {
      if (!reported) this.#failed(replicaError);
      reported = true;
      yield row;
    }
    if (!reported) this.#failed(replicaError);
  }

  async wrote(reader: Reader): Promise<void> {
    if (!reader) return;
    try {
      const { rows } = await sql<{ lsn: string }>`select pg_current_wal_insert_lsn()::text as lsn`.execute(
        this.primary,
      );
      this.#pins.set(reader.name, { lsn: rows[0]!.lsn });
    } catch {
      this.#pins.set(reader.name, { until: Date.now() + UNKNOWN_POSITION_PIN_MS });
    }
  }

  /** Whether this reader may read the replica now; asks the replica when the reader has a pin. */
  async #replicaServes(reader: Reader): Promise<boolean> {
    if (this.#downSince !== undefined && Date.now() - this.#downSince < this.#retryAfterMs) return false;
    const pin = reader ? this.#pins.get(reader.name) : undefined;
    if (!pin || !reader) return true;
    if ('until' in pin) {
      if (Date.now() < pin.until) return false;
      this.#pins.delete(reader.name);
      return true;
    }
    // A server that is not in recovery is no replica: it has everything the primary committed.
    const { rows } = await sql<{ replayed: boolean }>`
      select coalesce(pg_last_wal_replay_lsn() >= ${pin.lsn}::pg_lsn, not pg_is_in_recovery()) as replayed
    `.execute(this.replica.db);
    if (!rows[0]?.replayed) return false;
    if (this.#pins.get(reader.name) === pin) this.#pins.delete(reader.name);
    return true;
  }

  #answered(): void {
    if (this.#downSince === undefined) return;
    this.#downSince = undefined;
    this.log(`workbench: the read replica ${this.replica.address} answers again: heavy reads go to it`);
  }

  #failed(error: unknown): void {
    const first = this.#downSince === undefined;
    this.#downSince = Date.now();
    if (first)
      this.log(
        `workbench: the read replica ${this.replica.address} failed (${error instanceof Error ? error.message : String(error)}): reading from the primary, trying the replica again every ${Math.round(this.#retryAfterMs / 1000)} s`,
      );
  }
}
