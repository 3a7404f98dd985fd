import pg from 'pg';
import type { Queryable } from './queryable.ts';
import { trackClient, untrackClient } from './watchdog.ts';

/**
 * The session that owns a running load: a connection of its own, open from before the `loads` row is
 * written until the load has committed or failed. Its pid and start time go on the row. When the
 * process dies (kill -9, a crash of the machine) or the server restarts, that session ends, and the
 * next command that looks at `loads` ({@link markAbandonedLoads}) marks the row `abandoned`: nothing
 * stays `running` for ever, and nothing was kept of it (its rows commit in one transaction), so re-running
 * the load is the remedy.
 */
export interface LoadOwner {
  readonly pid: number;
  readonly backendStart: string;
  close(): Promise<void>;
}

export async function openLoadOwner(
  connectionString: string,
  options: { connectionTimeoutMillis?: number } = {},
): Promise<LoadOwner> {
  const client = new pg.Client({ connectionString, application_name: 'recon load owner', ...options });
  // Errors of this idle session (the server going away) surface through the load's own queries.
  client.on('error', () => {});
  trackClient(client);
  try {
    await client.connect();
    const r = await client.query<{ pid: number; backend_start: string }>(
      `select pid, backend_start::text as backend_start from pg_stat_activity where pid = pg_backend_pid()`,
    );
    const row = r.rows[0];
    if (!row) throw new Error('the load owner session is missing from pg_stat_activity');
    return {
      pid: row.pid,
      backendStart: row.backend_start,
      close: async () => {
        untrackClient(client);
        await client.end().catch(() => {});
      },
    };
  } catch (error) {
    untrackClient(client);
    await client.end().catch(() => {});
    throw error;
  }
}

/**
 * Marks `abandoned` every `running` load whose owner session is gone, or that names no owner.
 * Returns the load ids it marked. Cheap (an index-less scan of the few running rows is all it
 * costs); called when a load starts and when a reconcile run starts (through Kysely:
 * db/database-on-client.ts queryOn).
 */
export async function markAbandonedLoads(q: Queryable): Promise<number[]> {
  const r = await q.query<{ load_id: number }>(`
    update loads l set status = 'abandoned', finished_at = now(),
      error = 'its process or the database stopped while it ran; nothing of it was kept: re-run the load'
    where l.status = 'running'
      and not exists (
        select from pg_stat_activity a
        where a.pid = l.owner_pid
          and (a.backend_start is null or a.backend_start = l.owner_backend_start))
    returning l.load_id`);
  return r.rows.map((row) => row.load_id);
}
