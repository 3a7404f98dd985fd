import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/database.ts';
import type { ExpectedDiscrepancy } from './merchant-view.ts';

/** How the unresolved discrepancies of the warehouse compare with a ground truth. */
export interface GroundTruthScore {
  /** Planted discrepancies found with the same key, kind and amounts. */
  readonly found: number;
  /** Discrepancies planted (the ground truth's length). */
  readonly planted: number;
  /** Unresolved discrepancies in the warehouse. */
  readonly reported: number;
  /** found / reported (1 when nothing is reported). */
  readonly precision: number;
  /** found / planted (1 when nothing is planted). */
  readonly recall: number;
  /** Reported but not planted, as `key kind expected actual business_date` lines, sorted. */
  readonly surplus: string[];
  /** Planted but not reported (or reported with other amounts), same form. */
  readonly missed: string[];
}

const line = (key: string, kind: string, e: number | null, a: number | null, date: string) =>
  `${key} ${kind} ${e} ${a} ${date}`;

/**
 * Scores the unresolved discrepancies against the expected ones of a sandbox merchant view
 * (sandbox/merchant-view.ts): a discrepancy counts as found when its discrepancy_key, kind,
 * expected and actual amounts and Eastern business date are all those planted. With `range`, both
 * sides are limited to the business dates from..to (what a run over that range can see: a return
 * dated after the last day pulled is not there yet). Used by the ground-truth tests and `recon demo`,
 * so both report the same numbers. `account` keeps the discrepancies of one view among several (one
 * provider account's), so that each view is scored against its own findings: by the discrepancy's
 * account, since not every key names an id of the account's history (a return's, an adjustment's
 * hash, a settlement day's date).
 */
export async function scoreGroundTruth(
  db: Kysely<Database>,
  expected: readonly ExpectedDiscrepancy[],
  range?: { from: string; to: string },
  account?: string,
): Promise<GroundTruthScore> {
  let query = db
    .selectFrom('discrepancies')
    .select([
      'discrepancy_key',
      'kind',
      'expected_amount_cents',
      'actual_amount_cents',
      sql<string>`business_date::text`.as('business_date'),
    ])
    .where('resolved_at', 'is', null);
  if (range) query = query.where('business_date', '>=', range.from).where('business_date', '<=', range.to);
  if (account) query = query.where('account', '=', account);
  const rows = await query.execute();
  const actual = new Set(
    rows.map((r) =>
      line(r.discrepancy_key, r.kind, r.expected_amount_cents, r.actual_amount_cents, r.business_date),
    ),
  );
  const inRange = (d: string) => !range || (d >= range.from && d <= range.to);
  const planted = new Set(
    expected
      .filter((e) => inRange(e.businessDate))
      .map((e) => line(e.key, e.kind, e.expectedAmountCents, e.actualAmountCents, e.businessDate)),
  );
  const found = [...planted].filter((p) => actual.has(p)).length;
  return {
    found,
    planted: planted.size,
    reported: actual.size,
    precision: actual.size === 0 ? 1 : found / actual.size,
    recall: planted.size === 0 ? 1 : found / planted.size,
    surplus: [...actual].filter((a) => !planted.has(a)).sort(),
    missed: [...planted].filter((p) => !actual.has(p)).sort(),
  };
}

/** "found N of M planted discrepancies (precision P%, recall R%)", percentages to one decimal, floored. */
export function formatGroundTruthScore(s: GroundTruthScore): string {
  // Floored so that 100% means exactly all: 1609 of 1611 must not read as 100.0%.
  const pct = (n: number, d: number) => (d === 0 ? '100.0' : (Math.floor((n * 1000) / d) / 10).toFixed(1));
  return (
    `found ${s.found} of ${s.planted} planted discrepancies ` +
    `(precision ${pct(s.found, s.reported)}%, recall ${pct(s.found, s.planted)}%)`
  );
}
