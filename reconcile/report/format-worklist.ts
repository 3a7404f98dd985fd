/**
 * The worklist as text for a terminal: a table of discrepancies, and one discrepancy with its
 * evidence and history. Every amount is printed with its currency beside it.
 */
import type { TerminalDetail } from '../discrepancies/detail.ts';
import type { DiscrepancyRow } from '../discrepancies/row.ts';
import { formatCents } from './format-money.ts';

function money(cents: number | null | undefined, currency: string | null | undefined): string {
  if (cents === null || cents === undefined) return '';
  return `${currency ?? '???'} ${formatCents(cents)}`;
}

function table(header: string[], rows: string[][], right: ReadonlySet<number>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (right.has(i) ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}

/** One line per discrepancy: id, business date, kind, status, ids, expected/actual/difference with currency. */
export function formatDiscrepancyTable(rows: readonly DiscrepancyRow[]): string {
  if (rows.length === 0) return 'no discrepancy matches these filters\n';
  const body = rows.map((r) => [
    String(r.discrepancy_id),
    r.business_date ?? '',
    r.kind,
    r.status,
    r.transaction_id ?? r.return_transaction_id ?? '',
    r.merchant_transaction_id ?? '',
    money(r.expected_amount_cents, r.currency),
    money(r.actual_amount_cents, r.currency),
    money(r.difference_cents, r.currency),
  ]);
  return (
    table(
      ['id', 'date', 'kind', 'status', 'transaction', 'merchant txn', 'expected', 'actual', 'difference'],
      body,
      new Set([0, 6, 7, 8]),
    ) + `${rows.length} discrepanc${rows.length === 1 ? 'y' : 'ies'}\n`
  );
}

function fields(title: string, row: Record<string, unknown> | null): string {
  if (!row) return `${title}: none\n`;
  const currency = typeof row.currency === 'string' ? row.currency : null;
  const lines = Object.entries(row)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => {
      const value = k.endsWith('_cents') && typeof v === 'number' ? money(v, currency) : String(v);
      return `  ${k}: ${value}`;
    });
  return `${title}:\n${lines.join('\n')}\n`;
}

/** The discrepancy, its evidence rows and its events, as sections of `name: value` lines. */
export function formatDiscrepancyDetail(detail: TerminalDetail): string {
  const d = detail.discrepancy;
  const parts = [
    `discrepancy ${d.discrepancy_id}: ${d.kind} (${d.status}), business date ${d.business_date ?? 'unknown'}, rule ${d.rule}\n`,
    fields('amounts', {
      expected_amount_cents: d.expected_amount_cents,
      actual_amount_cents: d.actual_amount_cents,
      difference_cents: d.difference_cents,
      currency: d.currency,
    }),
    `  expected: ${JSON.stringify(d.expected)}\n  actual: ${JSON.stringify(d.actual)}\n`,
    `  first seen ${d.first_seen_at}, last seen ${d.last_seen_at}${d.resolved_at ? `, resolved ${d.resolved_at}` : ''}\n`,
    d.acknowledged_at
      ? `  acknowledged by ${d.acknowledged_by} at ${d.acknowledged_at}: ${d.note ?? ''}\n`
      : '',
    fields('provider transaction', detail.evidence.providerTransaction),
    ...(detail.evidence.providerReturn ? [fields('provider return', detail.evidence.providerReturn)] : []),
    fields('ledger entry', detail.evidence.ledgerEntry),
    detail.evidence.notifications.length === 0
      ? 'notifications: none\n'
      : detail.evidence.notifications.map((n, i) => fields(`notification ${i + 1}`, n)).join(''),
    `history:\n${detail.events.map((e) => `  ${e.at}  ${e.event}  ${JSON.stringify(e.details)}`).join('\n')}\n`,
  ];
  return parts.join('');
}
