import { createInterface } from 'node:readline';

/**
 * Reads what RECON_PROFILE=explain printed on stderr (each statement's line, then its executed plan)
 * and prints one Markdown row per statement: the shared buffers it touched (hit + read, from the
 * plan's top node) and every sequential scan of a warehouse table with the rows it read. A statement
 * whose cost follows its window shows index scans of the large tables, no sequential scan of them.
 *
 *   RECON_PROFILE=explain node bench/nightly.ts --reuse --keep --repeat 1 --only large 2> plans.txt
 *   node bench/explain-digest.ts < plans.txt
 */

/** The tables that grow with the warehouse's years; a sequential scan of one reads its whole history. */
const LARGE = new Set([
  'provider_transactions',
  'legacy_transactions',
  'provider_returns',
  'merchant_ledger',
  'notifications',
  'transaction_matches',
  'notification_matches',
  'return_matches',
  'source_matches',
  'discrepancies',
  'discrepancy_events',
  'discrepancy_totals',
  'row_history',
  'rejected_rows',
  'loads',
]);

interface Statement {
  readonly ms: string;
  readonly sql: string;
  buffers: number | null;
  readonly seqScans: string[];
}

const statements: Statement[] = [];
for await (const line of createInterface({ input: process.stdin })) {
  const head = /^\s*(\d+) ms {2}(.*)$/.exec(line);
  if (head) {
    statements.push({ ms: head[1]!, sql: head[2]!, buffers: null, seqScans: [] });
    continue;
  }
  const current = statements.at(-1);
  if (!current) continue;
  const buffers = /Buffers: shared(?: hit=(\d+))?(?: read=(\d+))?/.exec(line);
  if (buffers && current.buffers === null)
    current.buffers = Number(buffers[1] ?? 0) + Number(buffers[2] ?? 0);
  const seq = /Seq Scan on (\w+)(?: \w+)? \(actual rows=(\d+)/.exec(line);
  if (seq && LARGE.has(seq[1]!))
    current.seqScans.push(`${seq[1]} (${Number(seq[2]).toLocaleString('en')} rows)`);
}

const rows = statements.filter((s) => s.buffers !== null);
process.stdout.write('| statement | ms | shared buffers | sequential scans of warehouse tables |\n');
process.stdout.write('| --- | ---: | ---: | --- |\n');
for (const s of rows) {
  const text = s.sql.replaceAll('|', '\\|').slice(0, 100);
  process.stdout.write(
    `| \`${text}\` | ${s.ms} | ${s.buffers!.toLocaleString('en')} | ${s.seqScans.join(', ') || 'none'} |\n`,
  );
}
const scanned = rows.filter((s) => s.seqScans.length > 0).length;
process.stdout.write(
  `\n${rows.length} statements, ${rows.reduce((n, s) => n + s.buffers!, 0).toLocaleString('en')} shared buffers in all; ${scanned} scan a warehouse table sequentially\n`,
);
