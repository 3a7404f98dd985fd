import type { Db } from '../../db/database.ts';

/**
 * Whether the receiver's database is there. While it is away every delivery is answered 503 at once;
 * a probe every `probeIntervalMs` brings it back, and deliveries are accepted again with no restart.
 */
export class DatabaseWatch {
  /** True from a failure until a probe finds the database again. */
  away = false;
  #probe: NodeJS.Timeout | undefined;
  #closing = false;
  readonly #db: Db;
  readonly #log: (line: string) => void;
  readonly #probeIntervalMs: number;

  constructor(db: Db, log: (line: string) => void, probeIntervalMs: number) {
    this.#db = db;
    this.#log = log;
    this.#probeIntervalMs = probeIntervalMs;
  }

  /** Whether the database answers a trivial query within `timeoutMs`. */
  async ping(timeoutMs: number): Promise<boolean> {
    let timeout: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.#db.selectNoFrom((eb) => eb.lit(1).as('one')).execute(),
        new Promise((_, reject) => {
          timeout = setTimeout(() => reject(new Error('database did not answer')), timeoutMs);
        }),
      ]);
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timeout);
    }
  }

  /** The database failed a delivery: away until a probe finds it again. */
  lost(error: unknown): void {
    if (this.away || this.#closing) return;
    this.away = true;
    this.#log(`database unavailable (${(error as Error).message}): answering 503 until it is back`);
    const check = async () => {
      if (this.#closing) return;
      if (await this.ping(2000)) {
        this.away = false;
        this.#probe = undefined;
        this.#log('database available again: accepting deliveries');
      } else this.#probe = setTimeout(() => void check(), this.#probeIntervalMs);
    };
    this.#probe = setTimeout(() => void check(), this.#probeIntervalMs);
  }

  /** Stops probing: the receiver is closing. */
  close(): void {
    this.#closing = true;
    clearTimeout(this.#probe);
  }
}
