/**
 * `recon demo` explains and resolves what does not match (issue 29; docs/finance.md, Near-miss
 * candidates and manual matches, Tolerances and write-offs), on one account of the demo, after its
 * ground truth is scored: the candidates of a payin booked under a mistyped id, a one-to-one match
 * from the first of them, a one-to-many match of a payin booked as two entries, each with its note,
 * then a tolerance whose write-off limit writes off the fees one cent off the contract, and the
 * month's write-off report. The items are the near misses the sandbox planted (MerchantView.nearMisses);
 * what is shown and done goes through the same functions as the workbench and `recon matches`.
 */
import { sql } from 'kysely';
import type { DatabaseHandle } from '../db/connect.ts';
import { easternDateOf } from '../domain/time/eastern.ts';
import { discrepancyCandidates, type Candidate } from '../reconcile/candidates/read-candidates.ts';
import { matchItems } from '../reconcile/manual-matches/apply.ts';
import type { MatchRequest } from '../reconcile/manual-matches/record.ts';
import { reconcileRange } from '../reconcile/reconcile-range.ts';
import { formatMoney } from '../reconcile/report/format-money.ts';
import { setTolerances } from '../reconcile/tolerances/index.ts';
import { formatWriteOffs, writeOffReport } from '../reconcile/tolerances/write-off-report.ts';
import type { DemoAccount } from './demo-accounts.ts';
import type { NearMiss, NearMissKind } from './merchant-view.ts';

/** Who the demo acts as: an operator without the right to write off by hand. */
const DEMO_ACTOR = { name: 'demo', mayWriteOff: false } as const;
/** The write-off limit the demo sets: the fees one cent off the contract fall within it. */
const WRITE_OFF_LIMIT_CENTS = 1;

interface OpenItem {
  readonly nearMiss: NearMiss;
  readonly discrepancyId: number;
  readonly currency: string;
  readonly amountCents: number;
  readonly businessDate: string;
}

/** The first near miss of `kind` whose payin's missing_in_ledger is open in from..to (none: matched before). */
async function firstOpen(
  handle: DatabaseHandle,
  a: DemoAccount,
  kind: NearMissKind,
  range: { from: string; to: string },
): Promise<OpenItem | undefined> {
  for (const n of a.view.nearMisses.filter((x) => x.kind === kind)) {
    const d = await sql<{ id: string; currency: string; cents: string; day: string }>`
      select discrepancy_id::text as id, currency::text as currency, expected_amount_cents::text as cents,
        business_date::text as day
      from discrepancies where account = ${a.name} and resolved_at is null
        and discrepancy_key = ${`missing_in_ledger:${n.providerTransactionIds[0]}`}
        and business_date between ${range.from}::date and ${range.to}::date`.execute(handle.db);
    const row = d.rows[0];
    if (row)
      return {
        nearMiss: n,
        discrepancyId: Number(row.id),
        currency: row.currency,
        amountCents: Number(row.cents),
        businessDate: row.day,
      };
  }
  return undefined;
}

function describeCandidate(c: Candidate, k: number): string[] {
  const what = c.side === 'ledger' ? 'ledger entry' : 'provider transaction';
  return [
    `    ${k + 1}. ${what} ${c.id} (${formatMoney(c.currency, c.amount_cents)} on ${c.business_date}), score ${c.score}`,
    ...c.checks.map((x) => `       ${x.check} ${x.passed ? 'passed' : 'failed'}: ${x.detail}`),
  ];
}

/** Makes the match and says what it did: its id, items, note and the discrepancies its run resolved. */
async function match(handle: DatabaseHandle, req: MatchRequest, how: string): Promise<string> {
  const m = await matchItems(handle.db, req, DEMO_ACTOR);
  const resolved = await sql<{ n: number }>`
    select count(*)::int as n from discrepancy_events e join discrepancies d using (discrepancy_id)
    where e.event = 'matched' and (e.details->>'match_id')::bigint = ${m.matchId} and d.resolved_at is not null`.execute(
    handle.db,
  );
  return (
    `  manual match ${m.matchId} (${how}): ${req.providerTransactionIds.join(' + ')} with ` +
    `${req.ledgerMerchantTransactionIds.join(' + ')} (${formatMoney(m.currency, m.providerAmountCents)}), ` +
    `by ${DEMO_ACTOR.name}, note "${req.note}": ${resolved.rows[0]!.n} discrepancies resolved`
  );
}

/** The candidates of a mistyped id's payin, and its 1:1 match with the first of them. */
async function matchMistypedId(handle: DatabaseHandle, a: DemoAccount, item: OpenItem): Promise<string[]> {
  const { candidates } = await discrepancyCandidates(handle.db, item.discrepancyId, 'all');
  const tid = item.nearMiss.providerTransactionIds[0]!;
  const lines = [
    `  missing_in_ledger ${tid} (${formatMoney(item.currency, item.amountCents)} on ${item.businessDate}) has ${candidates.length} near-miss candidate(s):`,
    ...candidates.slice(0, 3).flatMap(describeCandidate),
  ];
  const first = candidates[0];
  if (!first || first.side !== 'ledger') return [...lines, '  no ledger entry to match it with'];
  const note = 'booked under a mistyped merchant transaction id';
  const req = { account: a.name, providerTransactionIds: [tid], ledgerMerchantTransactionIds: [first.id] };
  return [...lines, await match(handle, { ...req, note, origin: 'cli' }, '1:1, from candidate 1')];
}

/** A tolerance with a write-off limit of one cent, a run of the range with it, and what it wrote off. */
async function writeOffCents(handle: DatabaseHandle, a: DemoAccount, range: { from: string; to: string }) {
  const version = await setTolerances(handle.db, {
    account: a.name,
    changes: [
      {
        currency: a.currency,
        amountCents: 0,
        dateLagBusinessDays: 0,
        writeOffLimitCents: WRITE_OFF_LIMIT_CENTS,
      },
    ],
    setBy: DEMO_ACTOR.name,
    note: 'the provider rounds some fees up by a cent',
  });
  const run = await reconcileRange(handle.db, { account: a.name, ...range });
  const byKind = await sql<{ kind: string; n: number }>`
    select kind, count(*)::int as n from discrepancies
    where account = ${a.name} and resolution = 'written_off' group by kind order by kind`.execute(handle.db);
  const month = easternDateOf(new Date().toISOString()).slice(0, 7);
  const report = await writeOffReport(handle.db, { month, account: a.name });
  return [
    `  tolerance of ${a.name} ${a.currency}, version ${version}: amounts exact, no date lag, a difference of up to ${WRITE_OFF_LIMIT_CENTS} cent written off`,
    `  reconcile of ${a.name} ${range.from}..${range.to} with it: ${run.writeOffs.writtenOff} discrepancies written off` +
      ` (written off now: ${byKind.rows.map((r) => `${r.kind} ${r.n}`).join(', ') || 'none'})`,
    '',
    ...formatWriteOffs(report).trimEnd().split('\n'),
  ];
}

/**
 * Explains and resolves on account `a` (see the module comment), over from..to; returns the text to
 * print. Run again on the same warehouse, the items matched before are not matched twice.
 */
export async function explainAndResolve(
  handle: DatabaseHandle,
  a: DemoAccount,
  range: { from: string; to: string },
): Promise<string> {
  const lines = [`explain and resolve (${a.name}, ${a.currency}; docs/finance.md)`];
  const typo = await firstOpen(handle, a, 'mistyped_id', range);
  if (typo) lines.push(...(await matchMistypedId(handle, a, typo)));
  else lines.push('  no open payin booked under a mistyped id (matched by an earlier demo?)');
  const split = await firstOpen(handle, a, 'split_booking', range);
  if (split) {
    const req = {
      account: a.name,
      providerTransactionIds: split.nearMiss.providerTransactionIds,
      ledgerMerchantTransactionIds: split.nearMiss.ledgerMerchantTransactionIds,
      note: 'one payin booked as two entries',
      origin: 'cli' as const,
    };
    lines.push(await match(handle, req, '1:N, a split booking'));
  } else lines.push('  no open payin booked as two entries (matched by an earlier demo?)');
  lines.push(...(await writeOffCents(handle, a, range)));
  lines.push(
    `  (recon matches list, recon tolerances history --account ${a.name}, recon write-offs --month YYYY-MM)`,
  );
  return `${lines.join('\n')}\n\n`;
}
