import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { createDatabase } from '../db/database-on-client.ts';

/**
 * CPU time (user + system) of this database's backends so far, from /proc/<pid>/stat (clock ticks of
 * 1/100 s on Linux), plus that of the server's processes that have ended (the postmaster's reaped
 * children: the parallel workers a run started); null when the server is not local.
 */
export async function pgBackendCpuSeconds(db: ReturnType<typeof createDatabase>): Promise<number | null> {
  const pids = await sql<{
    pid: number;
  }>`select pid from pg_stat_activity where datname = current_database()`.execute(db);
  // Fields after the command name: [1] is the parent pid, [11]/[12] own user/system ticks, [13]/[14]
  // those of reaped children.
  const stat = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  let ticks = 0;
  try {
    for (const { pid } of pids.rows) {
      const fields = stat(pid);
      ticks += Number(fields[11]) + Number(fields[12]);
    }
    const postmaster = pids.rows[0] ? stat(Number(stat(pids.rows[0].pid)[1])) : undefined;
    if (postmaster) ticks += Number(postmaster[13]) + Number(postmaster[14]);
  } catch {
    return null;
  }
  return ticks / 100;
}
