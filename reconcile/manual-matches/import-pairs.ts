/**
 * Bulk manual matches from a CSV of pairs (`recon matches import FILE`; docs/finance.md, Manual
 * matches): each line is `provider transaction id,ledger merchant transaction id` (a header line
 * naming those columns is optional). Lines that share a provider transaction or a ledger entry form one
 * match: two lines with one provider id are a split booking (1:N), two with one ledger id a combined
 * one (N:1); a group that would be many to many is refused. Every line is checked, all or nothing: the
 * matches are recorded in one transaction only when every line passes, and the report says what each
 * line did (or why it was refused). The dates of the matches are then reconciled.
 */
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import { ReconError, typedError } from '../../domain/errors.ts';
import { splitCsvLine } from '../../provider/formats/read-lines.ts';
import { reconcileRange } from '../reconcile-range.ts';
import { addManualMatch, type MatchActor, type RecordedMatch } from './record.ts';

/** The most lines one import takes. */
export const MAX_LINES = 10_000;

export interface LineReport {
  readonly line: number;
  readonly provider_transaction_id: string | null;
  readonly ledger_merchant_transaction_id: string | null;
  /** matched: recorded (match_id); checked: would have been, but another line was refused; refused: see reason. */
  readonly result: 'matched' | 'checked' | 'refused';
  readonly match_id: number | null;
  readonly reason: string | null;
}

export interface ImportReport {
  readonly applied: boolean;
  readonly lines: readonly LineReport[];
  readonly matches: number;
  /** The reconcile run of the matches' dates that followed, when applied. */
  readonly run_ids: readonly number[];
}

/** The import was refused: no line was applied. Carries the per-line report. */
export class ImportRefused extends typedError<{ readonly report: ImportReport }>('final') {
  constructor(report: ImportReport) {
    const refused = report.lines.filter((l) => l.result === 'refused');
    super(
      `${refused.length} of ${report.lines.length} lines refused, nothing matched (first: line ${refused[0]?.line}: ${refused[0]?.reason}): fix them and import the file again`,
      { report },
    );
  }
}

interface Pair {
  readonly line: number;
  readonly p: string;
  readonly l: string;
}

const HEADER = /^\s*"?provider_transaction_id"?\s*,\s*"?ledger_merchant_transaction_id"?\s*$/i;

/** The pairs of the file's text, or the lines that are not pairs (as refused line reports). */
export function parsePairs(text: string): { pairs: Pair[]; bad: LineReport[] } {
  const pairs: Pair[] = [];
  const bad: LineReport[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '' || (line === 1 && HEADER.test(raw))) return;
    const fields = splitCsvLine(raw)?.map((f) => f.trim());
    if (!fields || fields.length !== 2 || fields[0] === '' || fields[1] === '')
      bad.push({
        line,
        provider_transaction_id: null,
        ledger_merchant_transaction_id: null,
        result: 'refused',
        match_id: null,
        reason: 'not a pair: give provider transaction id,ledger merchant transaction id',
      });
    else pairs.push({ line, p: fields[0]!, l: fields[1]! });
  });
  if (pairs.length + bad.length > MAX_LINES)
    bad.push({
      line: lines.length,
      provider_transaction_id: null,
      ledger_merchant_transaction_id: null,
      result: 'refused',
      match_id: null,
      reason: `the file has more than ${MAX_LINES} pairs: split it`,
    });
  return { pairs, bad };
}

/** Lines joined by a shared provider or ledger id (union-find), in the order of their first line. */
export function groupPairs(pairs: readonly Pair[]): Pair[][] {
  const parent = pairs.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  const seen = new Map<string, number>();
  pairs.forEach((pair, i) => {
    for (const key of [`p:${pair.p}`, `l:${pair.l}`]) {
      const j = seen.get(key);
      if (j === undefined) seen.set(key, i);
      else parent[find(i)] = find(j);
    }
  });
  const groups = new Map<number, Pair[]>();
  pairs.forEach((pair, i) => {
    const root = find(i);
    groups.set(root, [...(groups.get(root) ?? []), pair]);
  });
  return [...groups.values()];
}

function lineReports(
  group: readonly Pair[],
  result: LineReport['result'],
  matchId: number | null,
  reason: string | null,
): LineReport[] {
  return group.map((g) => ({
    line: g.line,
    provider_transaction_id: g.p,
    ledger_merchant_transaction_id: g.l,
    result,
    match_id: matchId,
    reason,
  }));
}

/**
 * Checks every line and records the matches when all pass (one transaction; each group under a
 * savepoint, so that one refused group does not hide the checks of the others), then reconciles
 * their dates in one run. Throws ImportRefused with the report when any line is refused (nothing is
 * recorded); returns the report otherwise.
 */
export async function importPairs(
  db: Kysely<Database>,
  text: string,
  req: { account: string; note: string; actor: MatchActor },
): Promise<ImportReport> {
  const { pairs, bad } = parsePairs(text);
  const reports: LineReport[] = [...bad];
  const recorded: RecordedMatch[] = [];
  await db.transaction().execute(async (trx) => {
    for (const group of groupPairs(pairs)) {
      await sql`savepoint pair_group`.execute(trx);
      try {
        const m = await addManualMatch(
          trx,
          {
            account: req.account,
            providerTransactionIds: [...new Set(group.map((g) => g.p))],
            ledgerMerchantTransactionIds: [...new Set(group.map((g) => g.l))],
            note: req.note,
            origin: 'import',
          },
          req.actor,
        );
        recorded.push(m);
        reports.push(...lineReports(group, 'matched', m.matchId, null));
        await sql`release savepoint pair_group`.execute(trx);
      } catch (error) {
        if (!(error instanceof ReconError)) throw error;
        await sql`rollback to savepoint pair_group`.execute(trx);
        reports.push(...lineReports(group, 'refused', null, error.message));
      }
    }
    reports.sort((a, b) => a.line - b.line);
    // All or nothing: a refused line rolls every match of the file back (the error ends the transaction).
    if (reports.some((r) => r.result === 'refused'))
      throw new ImportRefused({
        applied: false,
        lines: reports.map((r) =>
          r.result === 'matched' ? { ...r, result: 'checked' as const, match_id: null } : r,
        ),
        matches: 0,
        run_ids: [],
      });
  });
  if (recorded.length === 0) return { applied: true, lines: reports, matches: 0, run_ids: [] };
  // One run over the dates of every match of the file.
  const dates = recorded.flatMap((m) => [m.from, m.to]).sort();
  const run = await reconcileRange(db, {
    account: req.account,
    from: dates[0]!,
    to: dates[dates.length - 1]!,
  });
  return { applied: true, lines: reports, matches: recorded.length, run_ids: [run.runId] };
}
