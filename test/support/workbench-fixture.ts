/**
 * The set-up the workbench's integration tests share (workbench-matches, -tolerances and their
 * browser tests): a database of the test file's own, seeded by the file, with workbench users of one
 * password, and the workbench served over it; the sessions and account-limited tokens the tests call
 * with; and the near misses the candidates and matches tests read.
 */
import type { Kysely } from 'kysely';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../../db/connect.ts';
import type { Database } from '../../db/database.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { addUser, createToken, type Role } from '../../workbench/auth/accounts.ts';
import { launchChromium } from './browser.ts';
import { createTestDatabase } from './database.ts';
import { insertLedger, insertLoad, insertTransactions } from './recon-rows.ts';
import { closeAgents, serveWorkbench, signIn, type Served, type SignedIn } from './workbench-http.ts';

/** Every test user's password. */
export const PASSWORD = 'correct horse battery';

/** The test users by name, each with the role it is named for (ada admin, olga operator, vic viewer). */
const ROLES = { ada: 'admin', olga: 'operator', vic: 'viewer' } as const satisfies Record<string, Role>;
export type UserName = keyof typeof ROLES;

export interface WorkbenchFixture {
  readonly h: DatabaseHandle;
  readonly server: Served;
}

/**
 * A new database seeded by `seed`, the `users` added (addUser: the real password cost) and the
 * workbench served over it. Close it with {@link stopWorkbench}.
 */
export async function startWorkbench(options: {
  readonly seed?: (db: Kysely<Database>) => Promise<unknown>;
  readonly users: readonly UserName[];
}): Promise<WorkbenchFixture> {
  const h = await createTestDatabase();
  await options.seed?.(h.db);
  for (const username of options.users)
    await addUser(h.db, { username, role: ROLES[username], password: PASSWORD });
  return { h, server: await serveWorkbench(h.db) };
}

/** Closes what {@link startWorkbench} opened, the parts that were opened (after a failed set-up too). */
export async function stopWorkbench(f: Partial<WorkbenchFixture>): Promise<void> {
  await f.server?.app.close();
  await closeAgents();
  await f.h?.close();
}

/**
 * {@link startWorkbench} and Chromium for a browser test file: started in beforeAll, closed in
 * afterAll. Read its fields inside a test.
 */
export function useBrowserWorkbench(
  options: Parameters<typeof startWorkbench>[0],
): WorkbenchFixture & { readonly browser: Browser } {
  const f = {} as { h: DatabaseHandle; server: Served; browser: Browser };
  beforeAll(async () => {
    Object.assign(f, await startWorkbench(options));
    f.browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await f.browser?.close();
    await stopWorkbench(f);
  });
  return f;
}

/** Signs `username` in with {@link PASSWORD}: its session. */
export async function sessionOf(server: Served, username: UserName): Promise<SignedIn> {
  return (await signIn(server.base, username, PASSWORD)) as SignedIn;
}

/** The Authorization header of a new API token of `role` limited to `accounts`. */
export async function tokenHeader(
  db: Kysely<Database>,
  token: { readonly name: string; readonly role: Role; readonly accounts: readonly string[] },
): Promise<{ authorization: string }> {
  return {
    authorization: `Bearer ${(await createToken(db, { ...token, accounts: [...token.accounts] })).token}`,
  };
}

/**
 * Near misses on 2026-03-02, reconciled: T-1 and its ledger entry M-T-l (a mistyped M-T-1), and T-2
 * (20.00) booked in two parts M-T-2-a (12.00) and M-T-2-b (8.00); each missing on the other side.
 */
export async function seedNearMisses(db: Kysely<Database>): Promise<void> {
  const load = await insertLoad(db, 'report-transactions');
  await insertTransactions(db, load, [
    { transaction_id: 'T-1', merchant_user_id: 'u1' },
    { transaction_id: 'T-2', amount_cents: 2000, merchant_user_id: 'u2' },
  ]);
  await insertLedger(db, [
    { merchant_transaction_id: 'M-T-l', merchant_user_id: 'u1' },
    { merchant_transaction_id: 'M-T-2-a', amount_cents: 1200, merchant_user_id: 'u2' },
    { merchant_transaction_id: 'M-T-2-b', amount_cents: 800, merchant_user_id: 'u2' },
  ]);
  await reconcileRange(db, { from: '2026-03-02', to: '2026-03-02', now: '2026-03-20T12:00:00Z' });
}

/** The id of the discrepancy of `kind` about transaction or merchant transaction `id` (of `account`). */
export async function discrepancyIdOf(
  db: Kysely<Database>,
  kind: string,
  id: string,
  account?: string,
): Promise<number> {
  const r = await sql<{ id: number }>`select discrepancy_id::int as id from discrepancies where kind = ${kind}
    and (transaction_id = ${id} or merchant_transaction_id = ${id})
    and (${account ?? null}::text is null or account = ${account ?? null})`.execute(db);
  return r.rows[0]!.id;
}
