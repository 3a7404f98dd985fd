import pg from 'pg';

/**
 * What a database's client backends wait for, sampled from pg_stat_activity every 20 ms on a
 * connection of its own: for the load's backend, whether its time off a CPU went to waiting for its
 * client (`Client:ClientRead`: Node) or to the server's own writing (`IO:WalInitWrite`, the new WAL
 * segments a young server zero-fills; `LWLock:WALWrite`, `IO:DataFileWrite`, ...), which the
 * scheduler's figures (schedule-split.ts) cannot tell apart (docs/benchmark-record.md §3, the
 * overlap).
 */
export class WaitEvents {
  private readonly samples = new Map<number, Map<string, number>>();
  private readonly client: pg.Client;
  private running = true;
  private loop: Promise<void> = Promise.resolve();
  private count = 0;
  private t0 = 0;
  private t1 = 0;

  private constructor(client: pg.Client) {
    this.client = client;
  }

  static async start(url: string): Promise<WaitEvents> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const w = new WaitEvents(client);
    w.t0 = Date.now();
    w.loop = w.run();
    return w;
  }

  private async run(): Promise<void> {
    while (this.running) {
      const r = await this.client.query<{ pid: number; w: string }>(
        `select pid, coalesce(wait_event_type || ':' || wait_event, 'on a CPU or waiting for one') as w
        from pg_stat_activity
        where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()`,
      );
      this.count++;
      for (const { pid, w } of r.rows) {
        const tally = this.samples.get(pid) ?? new Map<string, number>();
        tally.set(w, (tally.get(w) ?? 0) + 1);
        this.samples.set(pid, tally);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /**
   * Stops; the wait events of the backend seen busy most often, each as the seconds its share of the
   * samples stands for, largest first (`ClientRead 0.31 s, WalInitWrite 0.12 s, ...`).
   */
  async stop(): Promise<string> {
    this.running = false;
    await this.loop;
    this.t1 = Date.now();
    await this.client.end();
    const busy = (t: Map<string, number>) =>
      [...t].reduce((n, [w, c]) => n + (w.startsWith('Client') ? 0 : c), 0);
    const top = [...this.samples.values()].sort((a, b) => busy(b) - busy(a))[0];
    if (!top || this.count === 0) return '';
    const perSample = (this.t1 - this.t0) / 1000 / this.count;
    return [...top]
      .sort((a, b) => b[1] - a[1])
      .filter(([w]) => !w.startsWith('on a CPU'))
      .map(([w, c]) => `${w.split(':')[1]} ${(c * perSample).toFixed(2)} s`)
      .join(', ');
  }
}
