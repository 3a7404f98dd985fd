import type { Selectable } from 'kysely';
import type { Db } from './database.ts';
import type { PullCursorsTable } from './pull-cursors.table.ts';
import { DEFAULT_ACCOUNT } from '../domain/account-name.ts';

export type PullCursor = Selectable<PullCursorsTable>;

/**
 * The cursor of one account, source and window, or undefined when no workflow committed it yet.
 * `account` is 'default' when not given.
 */
export async function readPullCursor(
  db: Db,
  key: { account?: string; source: string; from: string; to: string },
): Promise<PullCursor | undefined> {
  return db
    .selectFrom('pull_cursors')
    .selectAll()
    .where('account', '=', key.account ?? DEFAULT_ACCOUNT)
    .where('source', '=', key.source)
    .where('window_from', '=', key.from)
    .where('window_to', '=', key.to)
    .executeTakeFirst();
}

/**
 * Moves the cursor of one account, source and window to a committed load (insert or replace;
 * idempotent). Each account has its own cursors.
 */
export async function savePullCursor(
  db: Db,
  cursor: {
    account?: string;
    source: string;
    from: string;
    to: string;
    loadId: number;
    fileSha256: string | null;
    rowsLoaded: number;
    workflowId: string;
    runId: string;
  },
): Promise<void> {
  const values = {
    load_id: cursor.loadId,
    file_sha256: cursor.fileSha256,
    rows_loaded: cursor.rowsLoaded,
    workflow_id: cursor.workflowId,
    run_id: cursor.runId,
  };
  await db
    .insertInto('pull_cursors')
    .values({
      account: cursor.account ?? DEFAULT_ACCOUNT,
      source: cursor.source,
      window_from: cursor.from,
      window_to: cursor.to,
      ...values,
    })
    .onConflict((oc) =>
      oc.columns(['account', 'source', 'window_from', 'window_to']).doUpdateSet((eb) => ({
        ...values,
        committed_at: eb.fn('now'),
      })),
    )
    .execute();
}
