import type { ReconcileSummary } from '../reconcile-range.ts';
import type { ReportData } from './report-data.ts';
import { formatCents } from './format-money.ts';

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n') + '\n';
}

/** The terminal summary of one reconcile run. */
export function formatSummary(s: ReconcileSummary): string {
  const kinds = Object.entries(s.discrepancies).sort((a, b) => b[1].count - a[1].count);
  return (
    `reconciled ${s.from}..${s.to} as of ${s.asOf} (run ${s.runId}, ${s.durationMs} ms)\n` +
    `matched: ${s.matched.transactions} transactions to the ledger, ${s.matched.returns} returns to ledger RETURN entries, ` +
    `${s.matched.notifications} notifications, ${s.matched.legacy} legacy rows\n` +
    `discrepancies: ${s.totalDiscrepancies} (opened ${s.lifecycle.opened}, reopened ${s.lifecycle.reopened}, ` +
    `changed ${s.lifecycle.changed}, resolved ${s.lifecycle.resolved})\n` +
    (kinds.length
      ? table(
          ['kind', 'count', 'amount'],
          kinds.map(([k, v]) => [k, String(v.count), formatCents(v.cents)]),
        )
      : '')
  );
}

/** The terminal report of a range: discrepancies by kind and by day, volumes, returns by code. */
export function formatReport(d: ReportData): string {
  const days = [...new Set(d.byDay.map((r) => r.day))];
  const out: string[] = [`reconciliation report ${d.from}..${d.to}\n`];
  out.push('\nunresolved discrepancies by kind\n');
  out.push(
    d.byKind.length
      ? table(
          ['kind', 'count', 'amount'],
          d.byKind.map((r) => [r.kind, String(r.count), formatCents(r.cents)]),
        )
      : 'none\n',
  );
  out.push('\nunresolved discrepancies by day\n');
  out.push(
    days.length
      ? table(
          ['day', 'count', 'amount'],
          days.map((day) => {
            const rows = d.byDay.filter((r) => r.day === day);
            return [
              day,
              String(rows.reduce((n, r) => n + r.count, 0)),
              formatCents(rows.reduce((n, r) => n + r.cents, 0)),
            ];
          }),
        )
      : 'none\n',
  );
  out.push('\nsuccessful transactions by day\n');
  out.push(
    d.volumes.length
      ? table(
          ['day', 'type', 'count', 'amount'],
          d.volumes.map((r) => [r.day, r.type, String(r.count), formatCents(r.cents)]),
        )
      : 'none\n',
  );
  out.push('\nreturns by code\n');
  out.push(
    d.returnsByCode.length
      ? table(
          ['code', 'count', 'amount'],
          d.returnsByCode.map((r) => [r.code, String(r.count), formatCents(r.cents)]),
        )
      : 'none\n',
  );
  return out.join('');
}
