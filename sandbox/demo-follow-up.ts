import { sql } from 'kysely';
import type { DatabaseHandle } from '../db/connect.ts';
import type { NightlyFollowUp } from '../workflows/types.ts';
import type { DemoAccounts } from './demo-accounts.ts';

/**
 * What `recon demo` prints about the nightly follow-up (issue 25 §1): the backfill sees the provider as
 * of the end of its last day, when some transactions are still PENDING (the sandbox settles some of
 * them days or weeks later); the nightly run after it sees the provider later, and its follow-up asks
 * the status of those older than its windows. These lines say, per account, what it asked and
 * settled, and show a few transactions followed to their end: the status the backfill loaded and
 * the one the provider's status answer gave.
 */

/**
 * Every demo account's provider answers as of `asOf` (ISO); undefined: as of the instant of the
 * account's ground truth (its merchant view's asOf, the end of the last day plus 30 days), so that
 * what the nightly run sees of the provider is what the ground truth was planted from. The history's
 * own default is Eastern midnight, an hour before that instant in summer: a transaction settling in
 * that hour stayed PENDING for the run and settled for the ground truth.
 */
export function providerAsOf(accounts: DemoAccounts, asOf: string | undefined): void {
  for (const a of accounts.list) accounts.sandbox.account(a.name).sandbox.setAsOf(asOf ?? a.view.asOf);
}

/** Provider transactions of every account still PENDING in the warehouse. */
export async function pendingCount(handle: DatabaseHandle): Promise<number> {
  const row = await handle.db
    .selectFrom('provider_transactions')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('status', '=', 'PENDING')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The lines about the night's follow-up, per account, with up to `shown` transactions followed to their end. */
export async function describeFollowUp(
  handle: DatabaseHandle,
  followUp: readonly NightlyFollowUp[] | undefined,
  shown = 3,
): Promise<string[]> {
  if (!followUp || followUp.length === 0) return ['nightly follow-up: not run'];
  const lines: string[] = [];
  for (const f of followUp) {
    lines.push(
      `nightly follow-up of ${f.account}: ${f.nonFinal} transaction(s) not final older than the night's windows, ` +
        `${f.lookedUp} asked, ${f.settled} settled, ${f.stillPending} still pending, ${f.failed} failed` +
        (f.dates.length > 0 ? `; ${f.dates.length} day(s) reconciled again` : ''),
    );
    if (f.loadId === null) continue;
    const settled = await sql<{ transaction_id: string; on: string; was: string; now: string }>`
      select p.transaction_id, p.transaction_on::text as on, h.previous->>'status' as was, p.status as now
      from row_history h join provider_transactions p
        on p.account = h.account and p.transaction_id = h.row_key and p.load_id = h.load_id
      where h.load_id = ${f.loadId} and h.table_name = 'provider_transactions'
      order by p.transaction_on, p.transaction_id limit ${shown}`.execute(handle.db);
    for (const r of settled.rows) {
      lines.push(`  followed to its end: ${r.transaction_id} of ${r.on}, ${r.was} when loaded, now ${r.now}`);
    }
  }
  return lines;
}
