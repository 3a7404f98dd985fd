import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { reconcileRange } from '../reconcile/reconcile-range.ts';
import { previewSettings } from '../reconcile/tolerances/preview.ts';
import { parseSettingsFile } from '../reconcile/tolerances/settings-file.ts';
import { round2 } from './figures.ts';
import { generateRows, insertBenchLoad } from './generate-rows.ts';
import { pgBackendCpuSeconds } from './backend-cpu.ts';
import { dropScratch, openBenchServer } from './scratch-databases.ts';
import type { BenchStep } from './steps.ts';

/** Issue 29, section 4: the preview of a change over 1,000,000 transactions of history, under 2 minutes. */
export const PREVIEW_TARGET_SECONDS = 120;

export interface PreviewFigures {
  readonly rows: number;
  readonly prepareSeconds: number;
  /** The history's one reconcile run before the preview (what the nightly runs would have left). */
  readonly historyRunSeconds: number;
  readonly previewSeconds: number;
  /** PostgreSQL CPU seconds of the preview, when readable (bench/matching.ts). */
  readonly previewCpuSeconds: number | null;
  readonly items: number;
  readonly load: number;
}

const HISTORY = { start: '2024-03-10 04:00:00+00', days: 730, from: '2024-03-10', to: '2026-03-09' };
const AS_OF = '2026-03-20T12:00:00Z';
/** A proposal that changes findings: a cent of amount tolerance, differences up to 10 cents written off. */
const PROPOSAL = JSON.stringify({
  note: 'bench: rounding',
  tolerances: [
    { currency: 'CAD', amount_tolerance_cents: 1, write_off_limit_cents: 10, date_lag_business_days: 1 },
  ],
});

/**
 * `BENCH_STEPS=preview`: `rows` provider transactions over two years with their ledger entries and
 * notifications (the matching bench's generator, with duplicates and ledger-only entries),
 * reconciled once as the nightly runs would have left them, a few discrepancies resolved by a person
 * (accepted, fixed_in_ledger), then `recon rules preview` of a tolerance change over the whole
 * history (reconcile/tolerances/preview.ts), timed against the 120 s target.
 */
export async function benchPreview(
  options: { rows?: number; log?: (line: string) => void } = {},
): Promise<PreviewFigures> {
  const rows = options.rows ?? 1_000_000;
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const server = await openBenchServer();
  const scratch = `recon_bench_preview_${process.pid}`;
  const { db } = await server.create(scratch);
  try {
    const t0 = performance.now();
    await insertBenchLoad(db);
    await generateRows(db, 1, rows, HISTORY.start, HISTORY.days * 86_400, {
      duplicates: true,
      ledgerOnly: true,
    });
    await sql`vacuum analyze`.execute(db);
    const prepareSeconds = (performance.now() - t0) / 1000;
    log(
      `preview bench: ${rows.toLocaleString('en')} transactions over two years generated in ${prepareSeconds.toFixed(1)} s`,
    );
    const t1 = performance.now();
    await reconcileRange(db, { from: HISTORY.from, to: HISTORY.to, now: AS_OF });
    const historyRunSeconds = (performance.now() - t1) / 1000;
    // People's decisions for the preview to agree or disagree with: a sample by key, not by
    // discrepancy_id, whose order follows the order the run's plan inserted the findings in.
    await sql`update discrepancies set status = 'resolved', resolved_at = ${AS_OF}::timestamptz, resolved_by = 'bench',
        resolution = case when hashtext(discrepancy_key) % 100 < 0 then 'accepted' else 'fixed_in_ledger' end
      where abs(hashtext(discrepancy_key) % 50) = 0`.execute(db);
    await sql`vacuum analyze`.execute(db);
    log(`  history reconciled in ${historyRunSeconds.toFixed(1)} s`);

    const cpu0 = await pgBackendCpuSeconds(db);
    const t2 = performance.now();
    const preview = await previewSettings(db, parseSettingsFile(PROPOSAL, 'bench proposal'), {
      by: 'bench',
      asOf: AS_OF,
    });
    const previewSeconds = (performance.now() - t2) / 1000;
    const cpu1 = await pgBackendCpuSeconds(db);
    const figures: PreviewFigures = {
      rows,
      prepareSeconds: round2(prepareSeconds),
      historyRunSeconds: round2(historyRunSeconds),
      previewSeconds: round2(previewSeconds),
      previewCpuSeconds: cpu0 === null || cpu1 === null ? null : round2(cpu1 - cpu0),
      items: preview.itemCount,
      load: round2(loadavg()[0]!),
    };
    log(
      `  preview over ${preview.accounts.map((a) => `${a.from}..${a.to}`).join(', ')}: ${figures.previewSeconds} s ` +
        `(target <= ${PREVIEW_TARGET_SECONDS} s; PostgreSQL CPU ${figures.previewCpuSeconds ?? '?'} s; load ${figures.load}); ` +
        `${figures.items} items: ${JSON.stringify(countByChange(preview.totals))}`,
    );
    return figures;
  } finally {
    await db.destroy();
    await dropScratch(server, [scratch], log);
  }
}

function countByChange(totals: readonly { change: string; count: number }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of totals) out[t.change] = (out[t.change] ?? 0) + t.count;
  return out;
}

/** `npm run bench` section (BENCH_STEPS=preview): BENCH_PREVIEW_ROWS transactions of history (default 1,000,000). */
export const previewSteps: BenchStep[] = [
  {
    name: 'preview',
    async run(c) {
      const f = await benchPreview({ rows: Number(process.env.BENCH_PREVIEW_ROWS ?? 1_000_000), log: c.log });
      return [
        {
          name: 'recon rules preview over the whole history',
          rows: f.rows,
          seconds: f.previewSeconds,
          note:
            `target <= ${PREVIEW_TARGET_SECONDS} s: ${f.previewSeconds <= PREVIEW_TARGET_SECONDS ? 'met' : 'MISSED'}; ` +
            `PostgreSQL CPU ${f.previewCpuSeconds ?? '?'} s; ${f.items} items; the history's reconcile run ${f.historyRunSeconds} s; load ${f.load}`,
        },
      ];
    },
  },
];

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--rows');
  await benchPreview(i > 0 ? { rows: Number(process.argv[i + 1]) } : {});
}
