import { execFile, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { LoadSummary } from '../domain/load-summary.ts';
import { queryRows, runStatement } from './context.ts';
import { generateLegacyType5, generateReportJson } from './generate-files.ts';
import type { BenchContext, BenchResult, BenchStep } from './steps.ts';

const run = promisify(execFile);
const PSQL = '/usr/bin/psql';
const PGLOADER = '/usr/bin/pgloader';
const CHILD = fileURLToPath(new URL('./load-child.mjs', import.meta.url));

export async function timed<T>(body: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const start = process.hrtime.bigint();
  const value = await body();
  return { value, seconds: Number(process.hrtime.bigint() - start) / 1e9 };
}

/**
 * Runs one load in a child process (its own peak RSS), returning the summary, the child's maxRSS and
 * its CPU seconds (user + system).
 */
export async function loadInChild(
  url: string,
  source: string,
  format: string,
  queryType: string,
  file: string,
  onSpawn?: (pid: number | undefined) => void,
) {
  return new Promise<{ summary: LoadSummary; maxRssKiB: number; cpuSeconds: number }>((resolve, reject) => {
    // The same V8 flag as bin/recon.mjs (its shebang), so that the child's peak RSS is recon import's.
    const child = spawn(
      process.execPath,
      ['--max-semi-space-size=16', CHILD, url, source, format, queryType, file],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    onSpawn?.(child.pid);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`load child exited with ${code}`));
      else resolve(JSON.parse(out) as { summary: LoadSummary; maxRssKiB: number; cpuSeconds: number });
    });
  });
}

export async function psql(url: string, command: string): Promise<void> {
  await run(PSQL, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', url, '-c', command], { maxBuffer: 1 << 20 });
}

/**
 * The loader against `psql \copy` of the same rows already normalised: the warehouse rows of each
 * table the load wrote are exported as CSV, then copied (1) into UNLOGGED tables of the same columns
 * without indexes or constraints, and (2) into the real warehouse tables (logged, their indexes and
 * constraints) of a fresh database: what the schema itself costs, apart from the loader.
 */
async function copyBaseline(ctx: BenchContext, loadedUrl: string, tables: readonly string[]) {
  const files: { table: string; columns: string[]; csv: string }[] = [];
  for (const table of tables) {
    const columns = await columnsOf(loadedUrl, table, ['created_at', 'updated_at']);
    const csv = join(ctx.workDir, `${table}.normalised.csv`);
    await psql(loadedUrl, `\\copy (select ${columns.join(', ')} from ${table}) to '${csv}' csv`);
    files.push({ table, columns, csv });
  }
  const bare = await ctx.newDatabase();
  for (const f of files)
    await runStatement(bare, `create unlogged table bench_${f.table} (like ${f.table} including defaults)`);
  const real = await ctx.newDatabase();
  await runStatement(
    real,
    `insert into loads (source, environment, origin, format) values ('ledger', 'staging', 'direct', 'legacy')`,
  );
  let seconds = 0;
  let warehouseSeconds = 0;
  for (const f of files) {
    const cols = f.columns.join(', ');
    seconds += (await timed(() => psql(bare, `\\copy bench_${f.table} (${cols}) from '${f.csv}' csv`)))
      .seconds;
    warehouseSeconds += (await timed(() => psql(real, `\\copy ${f.table} (${cols}) from '${f.csv}' csv`)))
      .seconds;
  }
  return { seconds, warehouseSeconds };
}

export async function columnsOf(url: string, table: string, skip: string[]): Promise<string[]> {
  const r = await queryRows<{ column_name: string }>(
    url,
    `select column_name from information_schema.columns where table_name = $1 and table_schema = 'public' order by ordinal_position`,
    [table],
  );
  return r.map((x) => x.column_name).filter((c) => !skip.includes(c));
}

async function loaderSection(
  ctx: BenchContext,
  input: GeneratedInput,
): Promise<{ file: string; results: BenchResult[]; figures: LoaderFigures }> {
  const { label, source, format, queryType, tables } = input;
  const file = join(ctx.workDir, input.fileName);
  ctx.log(`generating ${ctx.rows} ${input.rowsAre}`);
  await input.generate(file, ctx.rows);
  const url = await ctx.newDatabase();
  ctx.log(`loading ${label} with the loader (child process)`);
  const first = await loadInChild(url, source, format, queryType, file);
  const load: BenchResult = {
    name: `recon import, ${label}`,
    rows: first.summary.rowsRead,
    seconds: first.summary.durationMs / 1000,
    peakRssMiB: first.maxRssKiB / 1024,
    note: `${first.summary.rowsInserted} inserted, ${(first.summary.bytes / 1048576).toFixed(0)} MiB file`,
  };
  ctx.log(`re-loading ${label} (idempotent: no row changes)`);
  const again = await loadInChild(url, source, format, queryType, file);
  const reload: BenchResult = {
    name: `recon import again, ${label}`,
    rows: again.summary.rowsRead,
    seconds: again.summary.durationMs / 1000,
    peakRssMiB: again.maxRssKiB / 1024,
    note: `${again.summary.rowsUnchanged} unchanged`,
  };
  ctx.log(`psql \\copy baseline for ${label}`);
  const copy = await copyBaseline(ctx, url, tables);
  const written = tables.join(' + ');
  const figures: LoaderFigures = {
    rows: load.rows,
    loadSeconds: load.seconds,
    reloadSeconds: reload.seconds,
    peakRssMiB: Math.max(load.peakRssMiB!, reload.peakRssMiB!),
    copyBareSeconds: copy.seconds,
    copySameTablesSeconds: copy.warehouseSeconds,
  };
  const results = [
    load,
    reload,
    {
      name: `psql \\copy, ${label}: same normalised rows into ${written} as bare UNLOGGED tables (no index, no constraint)`,
      rows: load.rows,
      seconds: copy.seconds,
      note: `loader/\\copy = ${(load.seconds / copy.seconds).toFixed(2)}x`,
    },
    {
      name: `psql \\copy, ${label}: same normalised rows into ${written} (logged, same indexes and constraints)`,
      rows: load.rows,
      seconds: copy.warehouseSeconds,
      note: `loader/\\copy = ${(load.seconds / copy.warehouseSeconds).toFixed(2)}x`,
    },
  ];
  return { file, results, figures };
}

/**
 * pgloader of the raw legacy file, with the same conversions (implied decimals → cents, Eastern → UTC),
 * twice: into its own bare table (primary key only), and into `legacy_transactions` itself (its
 * indexes, lineage columns set to a loads row, raw line rebuilt): the second is apples to apples with
 * the loader's legacy_transactions half (the loader also fills provider_transactions).
 */
export async function pgloaderSection(
  ctx: BenchContext,
  file: string,
  rows: number,
  loaderSeconds?: number,
): Promise<{ results: BenchResult[]; figures?: PgloaderFigures }> {
  if (!existsSync(PGLOADER)) {
    ctx.log('pgloader not installed: skipped (apt-get install -y pgloader)');
    return { results: [] };
  }
  const date = (f: string) => `(format nil "~a-~a-~a" (subseq ${f} 0 4) (subseq ${f} 4 6) (subseq ${f} 6 8))`;
  // pgloader's column list needs a parenthesised expression after every `using`.
  const txt = (f: string) => `(if (string= ${f} "") nil ${f})`;
  const cents = (f: string) => `(if (string= ${f} "") nil (format nil "~d" (parse-integer ${f})))`;
  const fields = Array.from({ length: 17 }, (_, i) => `f${i + 1}`);
  const columns = `    transaction_id text using ${txt('f4')},
    transaction_on date using ${date('f1')},
    raw_transaction_type text using ${txt('f2')},
    merchant_transaction_id text using ${txt('f3')},
    amount_cents bigint using ${cents('f5')},
    currency text using ${txt('f6')},
    status text using (if (string= f7 "S") "SUCCESSFUL" "FAILED"),
    raw_status text using ${txt('f7')},
    internal_user_id text using ${txt('f8')},
    fee_cents bigint using ${cents('f9')},
    merchant_account_id text using ${txt('f10')},
    error_code text using ${txt('f11')},
    raw_notify_status text using ${txt('f12')},
    merchant_user_id text using ${txt('f13')},
    raw_transaction_time text using ${txt('f14')},
    transaction_at timestamptz using (format nil "~a ~a:~a:~a America/Toronto" ${date('f1')} (subseq f14 0 2) (subseq f14 2 4) (subseq f14 4 6)),
    country_code text using ${txt('f15')},
    consumer_email text using ${txt('f16')},
    bank_account_masked text using ${txt('f17')}`;
  const warehouseColumns = `${columns},
    query_type text using "5",
    load_id bigint using "1",
    first_load_id bigint using "1",
    raw text using (format nil "~{~a~^,~}" (list ${fields.join(' ')}))`;
  const commands = (url: string, table: string, cols: string) => `LOAD CSV
  FROM '${file}' (${fields.join(', ')})
  INTO ${url}
  TARGET TABLE ${table}
  (
${cols}
  )
  WITH fields terminated by ',', fields not enclosed, workers = 2, concurrency = 1, batch rows = 25000
  SET client_encoding to 'utf8';
`;
  async function pgload(url: string, table: string, cols: string) {
    const load = join(ctx.workDir, `${table}.load`);
    writeFileSync(load, commands(url, table, cols));
    const { seconds } = await timed(() => run(PGLOADER, ['--quiet', load], { maxBuffer: 1 << 24 }));
    const loaded = Number((await queryRows<{ n: string }>(url, `select count(*) as n from ${table}`))[0]!.n);
    const ratio =
      loaderSeconds === undefined ? '' : `, loader/pgloader = ${(loaderSeconds / seconds).toFixed(2)}x`;
    return {
      seconds,
      note: `${loaded} rows in the table${loaded === rows ? '' : ' (not all: see pgloader output)'}${ratio}`,
    };
  }

  const bare = await ctx.newDatabase();
  await runStatement(
    bare,
    `create table pgloader_legacy (
      transaction_id text primary key, transaction_on date not null, raw_transaction_type text not null,
      merchant_transaction_id text, amount_cents bigint, currency char(3), status text, raw_status text,
      internal_user_id text, fee_cents bigint, merchant_account_id text, error_code text, raw_notify_status text,
      merchant_user_id text, raw_transaction_time text, transaction_at timestamptz, country_code text,
      consumer_email text, bank_account_masked text)`,
  );
  ctx.log('loading the legacy file with pgloader (own bare table)');
  const own = await pgload(bare, 'pgloader_legacy', columns);
  const same = await ctx.newDatabase();
  await runStatement(
    same,
    `insert into loads (source, environment, origin, format) values ('legacy-transactions', 'staging', 'direct', 'legacy')`,
  );
  ctx.log('loading the legacy file with pgloader (into legacy_transactions)');
  const warehouse = await pgload(same, 'legacy_transactions', warehouseColumns);
  return {
    results: [
      { name: 'pgloader, legacy type 5 (same conversions, own table: primary key only)', rows, ...own },
      {
        name: 'pgloader, legacy type 5 (same conversions, into legacy_transactions: logged, its indexes)',
        rows,
        ...warehouse,
      },
    ],
    figures: { ownTableSeconds: own.seconds, legacyTableSeconds: warehouse.seconds },
  };
}

/** One format's load, re-load and `\copy` baselines, at `ctx.rows` rows. */
export interface LoaderFigures {
  readonly rows: number;
  readonly loadSeconds: number;
  readonly reloadSeconds: number;
  /** The larger of the two loads' peak RSS. */
  readonly peakRssMiB: number;
  readonly copyBareSeconds: number;
  readonly copySameTablesSeconds: number;
}

export interface PgloaderFigures {
  readonly ownTableSeconds: number;
  readonly legacyTableSeconds: number;
}

/** A generated input of a loader section: its file, its rows, how it is loaded and where to. */
interface GeneratedInput {
  readonly label: string;
  readonly fileName: string;
  /** What the log calls its rows. */
  readonly rowsAre: string;
  readonly generate: (path: string, rows: number) => Promise<void>;
  readonly source: string;
  readonly format: string;
  readonly queryType: string;
  /** The tables the load writes (a legacy type 5 load writes two). */
  readonly tables: readonly string[];
}

/** The legacy type 5 section: a generated file of `ctx.rows` rows, the loader, `\copy` and pgloader. */
export async function benchLegacyIngest(
  ctx: BenchContext,
): Promise<{ results: BenchResult[]; loader: LoaderFigures; pgloader?: PgloaderFigures }> {
  const { file, results, figures } = await loaderSection(ctx, {
    label: 'legacy type 5',
    fileName: 'legacy-type5.csv',
    rowsAre: 'legacy type 5 rows',
    generate: generateLegacyType5,
    source: 'legacy-transactions',
    format: 'legacy',
    queryType: '5',
    tables: ['legacy_transactions', 'provider_transactions'],
  });
  const pgloader = await pgloaderSection(ctx, file, ctx.rows, figures.loadSeconds);
  return {
    results: [...results, ...pgloader.results],
    loader: figures,
    ...(pgloader.figures ? { pgloader: pgloader.figures } : {}),
  };
}

/** The JSON report section: a generated report of `ctx.rows` records, the loader and `\copy`. */
export async function benchJsonIngest(
  ctx: BenchContext,
): Promise<{ results: BenchResult[]; loader: LoaderFigures }> {
  const { results, figures } = await loaderSection(ctx, {
    label: 'report JSON',
    fileName: 'report.json',
    rowsAre: 'JSON report records',
    generate: generateReportJson,
    source: 'report-transactions',
    format: 'report-json',
    queryType: 'TRANSACTION',
    tables: ['provider_transactions'],
  });
  return { results, loader: figures };
}

export const ingestSteps: BenchStep[] = [
  { name: 'legacy type 5', run: async (ctx) => (await benchLegacyIngest(ctx)).results },
  { name: 'json report', run: async (ctx) => (await benchJsonIngest(ctx)).results },
];
