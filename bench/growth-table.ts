import { loadavg } from 'node:os';
import type { LoaderFigures, PgloaderFigures } from './ingest.ts';
import type { MatchingFigures } from './matching.ts';
import type { NightlyFigures } from './nightly.ts';

/** One size of the growth bench: its figures, with the load average around it. */
export interface GrowthSize {
  readonly rows: number;
  /** 1-minute load average when the size started and when it ended. */
  readonly loadAverage: readonly [number, number];
  readonly ingest?: { legacy: LoaderFigures; json: LoaderFigures; pgloader?: PgloaderFigures };
  readonly matching?: MatchingFigures;
  readonly nightly?: NightlyFigures;
}

/**
 * The growth bench's printout: one table of seconds per size with the growth factor against the
 * previous size, then one of issue 13's targets per size, each ratio marked met or missed, and the
 * list of what was missed.
 */
export function growthTables(sizes: readonly GrowthSize[]): string {
  return [secondsTable(sizes), '', targetsTable(sizes)].join('\n');
}

type Seconds = (s: GrowthSize) => number | undefined;

const MEASURES: readonly [string, Seconds][] = [
  ['ingest: `recon import`, legacy type 5 (writes 2 rows per line)', (s) => s.ingest?.legacy.loadSeconds],
  ['ingest: `recon import` again, legacy (unchanged)', (s) => s.ingest?.legacy.reloadSeconds],
  ['ingest: `\\copy` same rows, legacy, into the same tables', (s) => s.ingest?.legacy.copySameTablesSeconds],
  ['ingest: `\\copy` same rows, legacy, into bare UNLOGGED tables', (s) => s.ingest?.legacy.copyBareSeconds],
  ['ingest: pgloader, legacy, into `legacy_transactions`', (s) => s.ingest?.pgloader?.legacyTableSeconds],
  ['ingest: pgloader, legacy, own table (primary key only)', (s) => s.ingest?.pgloader?.ownTableSeconds],
  ['ingest: `recon import`, JSON report', (s) => s.ingest?.json.loadSeconds],
  ['ingest: `recon import` again, JSON (unchanged)', (s) => s.ingest?.json.reloadSeconds],
  ['ingest: `\\copy` same rows, JSON, into the same table', (s) => s.ingest?.json.copySameTablesSeconds],
  ['ingest: `\\copy` same rows, JSON, into a bare UNLOGGED table', (s) => s.ingest?.json.copyBareSeconds],
  ['matching: `reconcileRange`, first run', (s) => s.matching?.firstRunSeconds],
  ['matching: `reconcileRange`, re-run (nothing changed: reused)', (s) => s.matching?.rerunSeconds],
  [
    'matching: `reconcileRange`, re-run after one changed ledger entry',
    (s) => s.matching?.changedRerunSeconds,
  ],
  ['nightly: among the history, total (median)', (s) => s.nightly?.large.totalSeconds],
  ['nightly: among the history, pull and load', (s) => s.nightly?.large.pullSeconds],
  ['nightly: among the history, reconcile', (s) => s.nightly?.large.reconcileSeconds],
  ['nightly: empty warehouse, total (median)', (s) => s.nightly?.empty.totalSeconds],
];

const fmtRows = (n: number) => n.toLocaleString('en-US');
const loads = (s: GrowthSize) => `${s.loadAverage[0].toFixed(1)} → ${s.loadAverage[1].toFixed(1)}`;

function secondsTable(sizes: readonly GrowthSize[]): string {
  const head = [
    'seconds',
    ...sizes.flatMap((s, i) => [`${fmtRows(s.rows)} rows`, ...(i > 0 ? ['growth'] : [])]),
  ];
  const row = (label: string, cells: string[]) => `| ${[label, ...cells].join(' | ')} |`;
  const lines = [
    row(head[0]!, head.slice(1)),
    `|---|${head
      .slice(1)
      .map(() => '---:')
      .join('|')}|`,
    row(
      'load average (1 min), start → end',
      sizes.flatMap((s, i) => [loads(s), ...(i > 0 ? [''] : [])]),
    ),
  ];
  for (const [label, of] of MEASURES) {
    const values = sizes.map(of);
    if (values.every((v) => v === undefined)) continue;
    const cells = values.flatMap((v, i) => {
      const previous = i > 0 ? values[i - 1] : undefined;
      const growth =
        v === undefined || previous === undefined || previous === 0 ? '' : `${(v / previous).toFixed(2)}x`;
      return [v === undefined ? '' : v.toFixed(2), ...(i > 0 ? [growth] : [])];
    });
    lines.push(row(label, cells));
  }
  const nights = sizes.find((s) => s.nightly)?.nightly;
  const notes =
    sizes.length < 2
      ? []
      : [
          `Growth: seconds at this size / at the previous one (rows grow ${growthOfRows(sizes)}). ` +
            'Ingest and matching grow with the rows; the nightly job handles the same night at every size ' +
            '(its history grows), so its ideal growth is 1.00x.',
        ];
  if (nights)
    notes.push(
      `The nightly job pulls ${fmtRows(nights.rowsPulled)} rows (${fmtRows(nights.dayRows)} transactions a day); each nightly figure is the median of ${nights.nights.large.length} night(s) on each warehouse.`,
    );
  return [...lines, '', ...notes].join('\n');
}

function growthOfRows(sizes: readonly GrowthSize[]): string {
  return sizes
    .slice(1)
    .map((s, i) => `${(s.rows / sizes[i]!.rows).toFixed(0)}x`)
    .join(', ');
}

interface Target {
  readonly label: string;
  /** The figure at a size, as printed, and whether it meets the target; undefined: not measured. */
  readonly at: (s: GrowthSize) => { text: string; met: boolean } | undefined;
}

const ratio = (a: number, b: number) => a / b;
const x = (r: number) => `${r.toFixed(2)}x`;

const TARGETS: readonly Target[] = [
  ...(['legacy', 'json'] as const).flatMap((f): Target[] => {
    const name = f === 'legacy' ? 'legacy' : 'JSON';
    return [
      {
        label: `${name}: loader / \`\\copy\` into the same tables ≤ 1.3x`,
        at: (s) => {
          const l = s.ingest?.[f];
          return l && of(ratio(l.loadSeconds, l.copySameTablesSeconds), (r) => r <= 1.3);
        },
      },
      {
        label: `${name}: loader / \`\\copy\` into bare UNLOGGED tables ≤ 2.5x`,
        at: (s) => {
          const l = s.ingest?.[f];
          return l && of(ratio(l.loadSeconds, l.copyBareSeconds), (r) => r <= 2.5);
        },
      },
    ];
  }),
  {
    label: 'legacy: loader / pgloader into `legacy_transactions` < 1 (faster)',
    at: (s) => {
      const i = s.ingest;
      return i?.pgloader && of(ratio(i.legacy.loadSeconds, i.pgloader.legacyTableSeconds), (r) => r < 1);
    },
  },
  {
    label: 'legacy: loader / pgloader into its own table < 1 (faster)',
    at: (s) => {
      const i = s.ingest;
      return i?.pgloader && of(ratio(i.legacy.loadSeconds, i.pgloader.ownTableSeconds), (r) => r < 1);
    },
  },
  {
    label: 'peak RSS of the four loads < 300 MB',
    at: (s) => {
      if (!s.ingest) return undefined;
      const mib = Math.max(s.ingest.legacy.peakRssMiB, s.ingest.json.peakRssMiB);
      const mb = (mib * 1_048_576) / 1e6;
      return { text: `${mib.toFixed(0)} MiB (${mb.toFixed(0)} MB)`, met: mb < 300 };
    },
  },
  {
    label: 'nightly: among the history / empty warehouse ≤ 1.2',
    at: (s) => s.nightly && of(s.nightly.ratio, (r) => r <= 1.2),
  },
  ...(
    [
      ['first run', (m) => m.firstRunSeconds],
      ['re-run, nothing changed', (m) => m.rerunSeconds],
      ['re-run after one changed ledger entry', (m) => m.changedRerunSeconds],
    ] as const satisfies readonly (readonly [string, (m: MatchingFigures) => number])[]
  ).map(([run, seconds]): Target => ({
    label: `matching 1,000,000 × 1,000,000 × 1,000,000, ${run} < 10 s`,
    at: (s) => {
      if (!s.matching || s.rows !== 1_000_000) return undefined;
      const t = seconds(s.matching);
      return { text: `${t.toFixed(1)} s`, met: t < 10 };
    },
  })),
];

function of(r: number, meets: (r: number) => boolean) {
  return { text: x(r), met: meets(r) };
}

function targetsTable(sizes: readonly GrowthSize[]): string {
  const lines = [
    `| target (issue 13), from this run | ${sizes.map((s) => `${fmtRows(s.rows)} rows`).join(' | ')} |`,
    `|---|${sizes.map(() => '---').join('|')}|`,
  ];
  const missed: string[] = [];
  for (const t of TARGETS) {
    const cells = sizes.map((s) => {
      const r = t.at(s);
      if (r === undefined) return '';
      if (!r.met) missed.push(`${t.label} at ${fmtRows(s.rows)} rows (${r.text})`);
      return `${r.text} ${r.met ? 'met' : '**missed**'}`;
    });
    if (cells.every((c) => c === '')) continue;
    lines.push(`| ${t.label} | ${cells.join(' | ')} |`);
  }
  lines.push(
    '',
    `Load average (1, 5, 15 min) at the end: ${loadNow()}.`,
    missed.length === 0 ? 'Every target measured was met.' : `Missed: ${missed.join('; ')}.`,
  );
  return lines.join('\n');
}

function loadNow(): string {
  return loadavg()
    .map((n) => n.toFixed(2))
    .join(', ');
}
