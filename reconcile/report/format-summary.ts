import type { ReconcileSummary } from '../reconcile-range.ts';
import { currencyLabel, formatCents } from './format-money.ts';
import type { DiscrepancyRow, ReportCoverage, ReportData } from './report-data.ts';

/** A transaction type as people read it: null (a code that is neither DEBIT nor CREDIT) is "unknown". */
export function typeLabel(type: string | null): string {
  return type ?? 'unknown';
}

/** One open item as a compact JSON object: its id, where, what and the money at stake with its currency. */
function itemJson(r: DiscrepancyRow): unknown {
  return {
    discrepancy_id: r.discrepancy_id,
    account: r.account,
    business_date: r.business_date,
    kind: r.kind,
    status: r.status,
    currency: r.currency,
    stake_cents: r.stake_cents,
    transaction_id: r.transaction_id ?? r.return_transaction_id,
    merchant_transaction_id: r.merchant_transaction_id,
    first_seen_at: r.first_seen_at,
    assignee: r.assignee,
  };
}

function itemTable(rows: readonly DiscrepancyRow[]): string {
  return table(
    ['id', 'day', 'kind', 'currency', 'at stake', 'transaction'],
    rows.map((r) => [
      String(r.discrepancy_id),
      r.business_date ?? '',
      r.kind,
      currencyLabel(r.currency),
      formatCents(r.stake_cents),
      r.transaction_id ?? r.return_transaction_id ?? '',
    ]),
    4,
  );
}

/** A plain-text table: the first `left` columns aligned left, the others (numbers) right. */
function table(header: string[], rows: string[][], left = 1): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < left ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n') + '\n';
}

/** How many items (discrepancies, returns) and the money they concern, in one currency. */
interface Total {
  readonly currency: string | null;
  readonly count: number;
  readonly amount_cents: number;
}

/**
 * Totals as a table: the columns that name a row (`labels`, filled by `label`), then currency, count
 * and amount. Every table of totals, of a run or of a report, has this form.
 */
function totalsTable<R extends Total>(
  labels: readonly string[],
  rows: readonly R[],
  label: (r: R) => string[],
): string {
  return table(
    [...labels, 'currency', 'count', 'amount'],
    rows.map((r) => [...label(r), currencyLabel(r.currency), String(r.count), formatCents(r.amount_cents)]),
    labels.length + 1,
  );
}

/** The terminal summary of one reconcile run: discrepancies by kind and currency. */
export function formatSummary(s: ReconcileSummary): string {
  const perKind = new Map<string, number>();
  for (const d of s.discrepancies) perKind.set(d.kind, (perKind.get(d.kind) ?? 0) + d.count);
  const rows = [...s.discrepancies].sort(
    (a, b) => perKind.get(b.kind)! - perKind.get(a.kind)! || a.kind.localeCompare(b.kind),
  );
  return (
    `reconciled ${s.from}..${s.to} as of ${s.asOf} (run ${s.runId}, ${s.durationMs} ms)\n` +
    `matched: ${s.matched.transactions} transactions to the ledger, ${s.matched.returns} returns to ledger RETURN entries, ` +
    `${s.matched.notifications} notifications, ${s.matched.legacy} legacy rows` +
    (s.matching === 'reused'
      ? ' (reused: nothing matching reads changed since the last run of this range)\n'
      : s.scope === 'incremental'
        ? ' (incremental: what changed since these dates were last matched)\n'
        : '\n') +
    `discrepancies: ${s.totalDiscrepancies} (opened ${s.lifecycle.opened}, reopened ${s.lifecycle.reopened}, ` +
    `changed ${s.lifecycle.changed}, resolved ${s.lifecycle.resolved})\n` +
    (rows.length ? totalsTable(['kind'], rows, (r) => [r.kind]) : '')
  );
}

function dateRanges(runs: ReportCoverage['unchecked']): string {
  return runs.map((r) => (r.from === r.to ? r.from : `${r.from}..${r.to}`)).join(', ');
}

/**
 * What the report can vouch for: which dates of the range a committed reconcile run checked. A range
 * with unchecked dates says so first and names them, so that no "none" below reads as a clean bill.
 */
export function formatCoverage(d: Pick<ReportData, 'from' | 'to' | 'coverage'>): string {
  const c = d.coverage;
  const unchecked = c.days - c.checkedDays;
  if (c.days === 0) return `coverage: ${d.from}..${d.to} holds no date\n`;
  if (unchecked === 0) {
    return `coverage: all ${c.days} dates checked by reconcile runs (latest committed ${c.lastRunAt})\n`;
  }
  if (c.checkedDays === 0) {
    return (
      `coverage: NOT CHECKED: no reconcile run covers any date of ${d.from}..${d.to}, so nothing below has been matched.\n` +
      `  Run recon reconcile --from ${d.from} --to ${d.to} first.\n`
    );
  }
  return (
    `coverage: INCOMPLETE: ${unchecked} of ${c.days} dates were never checked by a reconcile run: ${dateRanges(c.unchecked)}\n` +
    `  Discrepancies on those dates are unknown, not zero: run recon reconcile over them first.\n`
  );
}

/** The text shown instead of an empty table of discrepancies: "none" only when every date was checked. */
function noDiscrepancies(c: ReportCoverage): string {
  if (c.checkedDays === c.days) return 'none\n';
  if (c.checkedDays === 0) return 'not checked: no reconcile run covers this range\n';
  return `none on the ${c.checkedDays} checked dates; ${c.days - c.checkedDays} dates not checked (see coverage)\n`;
}

/** Unresolved discrepancies per day and currency (kinds added within one currency only). */
export function discrepanciesByDay(
  d: Pick<ReportData, 'byDay'>,
): { day: string; currency: string | null; count: number; amount_cents: number }[] {
  const out = new Map<
    string,
    { day: string; currency: string | null; count: number; amount_cents: number }
  >();
  for (const r of d.byDay) {
    const key = `${r.day}\u0000${r.currency ?? ''}`;
    const row = out.get(key) ?? { day: r.day, currency: r.currency, count: 0, amount_cents: 0 };
    row.count += r.count;
    row.amount_cents += r.amount_cents;
    out.set(key, row);
  }
  return [...out.values()].sort(
    (a, b) => a.day.localeCompare(b.day) || (a.currency ?? '\uffff').localeCompare(b.currency ?? '\uffff'),
  );
}

/** The terminal report of a range: coverage, discrepancies by currency, kind and day, volumes, returns. */
export function formatReport(d: ReportData): string {
  const totals = <R extends Total>(
    title: string,
    labels: string[],
    rows: readonly R[],
    label: (r: R) => string[],
  ) => `\n${title}\n` + (rows.length ? totalsTable(labels, rows, label) : noDiscrepancies(d.coverage));
  const items = (title: string, rows: readonly DiscrepancyRow[]) =>
    `\n${title}\n` + (rows.length ? itemTable(rows) : noDiscrepancies(d.coverage));
  const out: string[] = [
    `reconciliation report ${d.from}..${d.to}\n`,
    formatCoverage(d),
    totals('unresolved discrepancies by currency', [], d.totals, () => []),
    totals('unresolved discrepancies by account and currency', ['account'], d.byAccount, (r) => [r.account]),
    totals('unresolved discrepancies by kind', ['kind'], d.byKind, (r) => [r.kind]),
    items('largest open items (per currency; recon discrepancies show ID for the evidence)', d.largestOpen),
    items('oldest open items', d.oldestOpen),
    totals('unresolved discrepancies by day', ['day'], discrepanciesByDay(d), (r) => [r.day]),
  ];
  out.push('\nsuccessful transactions by day\n');
  out.push(
    d.volumes.length
      ? table(
          ['day', 'type', 'currency', 'count', 'amount'],
          d.volumes.map((r) => [
            r.day,
            typeLabel(r.type),
            r.currency,
            String(r.count),
            formatCents(r.amount_cents),
          ]),
          3,
        )
      : 'none\n',
  );
  if (d.unknownTypeCodes.length) {
    out.push(
      `type unknown: the provider's type code (${d.unknownTypeCodes.join(', ')}) is neither DEBIT nor CREDIT; counted apart, never as payin or payout\n`,
    );
  }
  out.push('\nreturns by code\n');
  out.push(d.returnsByCode.length ? totalsTable(['code'], d.returnsByCode, (r) => [r.code]) : 'none\n');
  return out.join('');
}

/**
 * `recon report --json`: the terminal report's content, machine-readable. Every object with an
 * `amount_cents` carries its `currency`; the coverage names the dates no reconcile run checked.
 */
export function reportJson(d: ReportData): unknown {
  return {
    from: d.from,
    to: d.to,
    coverage: {
      days: d.coverage.days,
      checked_days: d.coverage.checkedDays,
      complete: d.coverage.checkedDays === d.coverage.days,
      unchecked: d.coverage.unchecked,
      last_run_at: d.coverage.lastRunAt,
    },
    unresolved_by_currency: d.totals,
    unresolved_by_account: d.byAccount,
    unresolved_by_kind: d.byKind,
    largest_open: d.largestOpen.map(itemJson),
    oldest_open: d.oldestOpen.map(itemJson),
    unresolved_by_day: discrepanciesByDay(d),
    successful_by_day: d.volumes,
    unknown_type_codes: d.unknownTypeCodes,
    returns_by_code: d.returnsByCode,
  };
}
