import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { csvField } from '../../domain/csv-field.ts';
import { formatCents } from '../report/format-money.ts';
import { InvalidTolerance } from './tolerance.ts';

/**
 * The write-offs of one Eastern month (by when they were written off), for the accountant who books
 * them: every row with its reason, and totals per currency, never added across currencies
 * (`recon report write-offs --month YYYY-MM`, the workbench's write-offs page).
 */
export interface WriteOffLine {
  readonly write_off_id: number;
  readonly written_off_at: string;
  readonly account: string;
  readonly currency: string;
  readonly amount_cents: number;
  readonly kind: string | null;
  readonly business_date: string | null;
  readonly discrepancy_id: number | null;
  readonly manual_match_id: number | null;
  readonly transaction_id: string | null;
  readonly merchant_transaction_id: string | null;
  readonly reason: string;
  readonly written_off_by: string;
  readonly reversal_of: number | null;
}

export interface WriteOffTotal {
  readonly currency: string;
  readonly count: number;
  /** The sum of the month's rows, reversals included: what to book, in cents of this currency. */
  readonly net_cents: number;
  readonly reversals: number;
}

export interface WriteOffReport {
  readonly month: string;
  readonly account: string | null;
  readonly totals: readonly WriteOffTotal[];
  readonly lines: readonly WriteOffLine[];
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** The month's write-offs, of one account or every account `visible` (null: all). */
export async function writeOffReport(
  db: Db,
  req: { month: string; account?: string | null; visible?: readonly string[] | null },
): Promise<WriteOffReport> {
  if (!MONTH.test(req.month))
    throw new InvalidTolerance(`month ${JSON.stringify(req.month)}: give YYYY-MM, e.g. 2026-03`);
  const start = `${req.month}-01`;
  const account = req.account ?? null;
  const visible = req.visible ?? null;
  const r = await sql<WriteOffLine>`
    select w.write_off_id::int as write_off_id, to_char(w.written_off_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as written_off_at,
      w.account, w.currency::text as currency, w.amount_cents::int as amount_cents, w.kind,
      w.business_date::text as business_date, w.discrepancy_id::int as discrepancy_id,
      w.manual_match_id::int as manual_match_id, d.transaction_id, d.merchant_transaction_id, w.reason,
      w.written_off_by, w.reversal_of::int as reversal_of
    from write_offs w left join discrepancies d on d.discrepancy_id = w.discrepancy_id
    where w.written_off_at >= (${start}::date)::timestamp at time zone 'America/Toronto'
      and w.written_off_at < ((${start}::date + interval '1 month')::date)::timestamp at time zone 'America/Toronto'
      and (${account}::text is null or w.account = ${account}::text)
      and (${visible === null}::boolean or w.account = any(${visible ?? []}::text[]))
    order by w.currency, w.written_off_at, w.write_off_id`.execute(db);
  const by = new Map<string, { count: number; net_cents: number; reversals: number }>();
  for (const line of r.rows) {
    const t = by.get(line.currency) ?? { count: 0, net_cents: 0, reversals: 0 };
    t.count += 1;
    t.net_cents += line.amount_cents;
    if (line.reversal_of !== null) t.reversals += 1;
    by.set(line.currency, t);
  }
  const totals = [...by].map(([currency, t]) => ({ currency, ...t }));
  return { month: req.month, account, totals, lines: r.rows };
}

const COLUMNS: readonly (keyof WriteOffLine | 'amount')[] = [
  'write_off_id',
  'written_off_at',
  'account',
  'currency',
  'amount_cents',
  'amount',
  'kind',
  'business_date',
  'discrepancy_id',
  'manual_match_id',
  'transaction_id',
  'merchant_transaction_id',
  'reason',
  'written_off_by',
  'reversal_of',
];

/** The report's lines as CSV: amounts in cents and in decimal beside their currency. */
export function writeOffsCsv(report: WriteOffReport): string {
  const lines = report.lines.map(
    (l) =>
      `${COLUMNS.map((c) => csvField(c === 'amount' ? formatCents(l.amount_cents).replaceAll(',', '') : l[c])).join(',')}\r\n`,
  );
  return `${COLUMNS.join(',')}\r\n${lines.join('')}`;
}

/** The report as text: totals per currency, then one line per write-off. */
export function formatWriteOffs(report: WriteOffReport): string {
  const head = `write-offs of ${report.month} (Eastern, by when written off)${report.account ? `, account ${report.account}` : ''}\n`;
  if (report.lines.length === 0) return `${head}  none\n`;
  const totals = report.totals.map(
    (t) =>
      `  ${t.currency} ${formatCents(t.net_cents)} net in ${t.count} write-off(s)${t.reversals ? `, ${t.reversals} of them reversals` : ''}\n`,
  );
  const lines = report.lines.map(
    (l) =>
      `  ${l.written_off_at}  ${l.account}  ${l.currency} ${formatCents(l.amount_cents)}  ${l.kind ?? 'manual match'}  ${l.transaction_id ?? l.merchant_transaction_id ?? ''}  ${l.reason}  (${l.written_off_by})\n`,
  );
  return `${head}${totals.join('')}\n${lines.join('')}`;
}
