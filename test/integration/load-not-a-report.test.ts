import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotAReport, TooManyRejected } from '../../domain/errors.ts';
import { loadReport, type LoadRequest } from '../../ingest/load/load-report.ts';
import { LEGACY_ERROR_PAGES } from '../../sandbox/server/faults.ts';
import { useTestDatabase } from '../support/database.ts';
import { warehouseChecksum } from '../support/ingest-records.ts';
import { recon } from '../support/recon-process.ts';

/**
 * Issue 25 section 4 against a real PostgreSQL: an answer of which no line is a record loads nothing
 * (before, it committed one rejected row and counted as a loaded day), and `recon parse` / `recon
 * import` on such a file exit 2 (before: 0, "1 line(s) rejected").
 */
const handle = useTestDatabase();
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'recon-not-a-report-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const text = (content: string) => Readable.from([Buffer.from(content)]);
const legacy = (queryType: string, over: Partial<LoadRequest> = {}): LoadRequest => ({
  source: queryType === '1' ? 'legacy-returns' : 'legacy-transactions',
  format: 'legacy',
  queryType,
  fileName: 'answer.csv',
  origin: 'pull',
  environment: 'staging',
  ...over,
});
const RETURN_LINE = '20260320,4,901,ORD-100001,RT2603200001,0000012550,CAD,,,ET2601150001,player-7731,CA';

async function lastLoad() {
  return handle.db.selectFrom('loads').selectAll().orderBy('load_id', 'desc').executeTakeFirstOrThrow();
}

describe('loading an answer that is not a report', () => {
  it('an HTML page answered with 200 loads nothing, keeps no rejected row and leaves its load failed', async () => {
    const before = await warehouseChecksum(handle.db);
    const error = await loadReport(handle, legacy('5'), text(LEGACY_ERROR_PAGES['login-expired'].body)).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(NotAReport);
    expect(await warehouseChecksum(handle.db)).toEqual(before);
    const load = await lastLoad();
    expect(load).toMatchObject({ status: 'failed', rows_loaded: 0 });
    expect(load.error).toMatch(/^NotAReport: answer\.csv: not a report: 9 lines, none of them a record/);
    expect(load.error).not.toContain('a1b2c3d4e5f6');
    const rejected = await handle.db
      .selectFrom('rejected_rows')
      .select('line_number')
      .where('load_id', '=', load.load_id)
      .execute();
    expect(rejected).toEqual([]);
  });

  it('an empty answer is a valid empty day: a committed load of zero rows', async () => {
    const summary = await loadReport(handle, legacy('1'), text(''));
    expect(summary).toMatchObject({ status: 'committed', rowsRead: 0, rowsRejected: 0 });
  });

  it('the rejected-line limit waits for the first record: no record at all is NotAReport, a record after too many rejections is TooManyRejected', async () => {
    const bad = 'Error: one\nError: two\nError: three\n';
    const none = await loadReport(handle, legacy('1', { maxRejected: 1 }), text(bad)).catch(
      (e: unknown) => e,
    );
    expect(none).toBeInstanceOf(NotAReport);
    const some = await loadReport(
      handle,
      legacy('1', { maxRejected: 1, maxRejectedSetting: 'RECON_MAX_REJECTED_PER_WINDOW' }),
      text(`${bad}${RETURN_LINE}\n`),
    ).catch((e: unknown) => e);
    expect(some).toBeInstanceOf(TooManyRejected);
    expect((some as Error).message).toBe(
      'answer.csv: more than 1 row(s) rejected (RECON_MAX_REJECTED_PER_WINDOW 1); the load was rolled back and nothing of it is kept: fix the input, or raise RECON_MAX_REJECTED_PER_WINDOW',
    );
    const within = await loadReport(handle, legacy('1', { maxRejected: 3 }), text(`${bad}${RETURN_LINE}\n`));
    expect(within).toMatchObject({ status: 'committed', rowsLoaded: 1, rowsRejected: 3 });
  });
});

describe('a body complete at the HTTP level but cut short', () => {
  it('commits the whole records and rejects the last one, storing no truncated value', async () => {
    const [first, second] = readFileSync(
      new URL('../fixtures/legacy/type1-returns.csv', import.meta.url),
      'utf8',
    )
      .split('\n')
      .filter((l) => l !== '');
    const summary = await loadReport(
      handle,
      legacy('1', { fileName: 'cut.csv' }),
      text(`${first}\n${second!.slice(0, -1)}`),
    );
    expect(summary).toMatchObject({ status: 'committed', rowsRead: 2, rowsLoaded: 1, rowsRejected: 1 });
    const rejected = await handle.db
      .selectFrom('rejected_rows')
      .select(['line_number', 'reason'])
      .where('load_id', '=', summary.loadId)
      .execute();
    expect(rejected).toEqual([
      { line_number: 2, reason: "field 12 (country code) 'C' is not a two-letter ISO 3166 country code" },
    ]);
    const stored = await handle.db
      .selectFrom('provider_returns')
      .select(['return_transaction_id', 'country_code'])
      .where('return_transaction_id', 'in', [first!.split(',')[4]!, second!.split(',')[4]!])
      .execute();
    expect(stored).toEqual([{ return_transaction_id: first!.split(',')[4], country_code: 'CA' }]);
  });
});

describe('recon parse and recon import on a file that is not a report', () => {
  it('exit 2 with one line naming the file, after the rejected line', async () => {
    const file = join(dir, 'answer.csv');
    writeFileSync(file, 'Error: invalid merchant_pass\n');
    const args = ['--format', 'legacy', '--query-type', '5', file];
    const parsed = await recon(handle.connectionString, ['parse', ...args]);
    expect(parsed.code).toBe(2);
    expect(parsed.stdout).toBe('');
    expect(parsed.stderr.trimEnd().split('\n').at(-1)).toBe(
      `recon: ${file}: not a report: 1 line, none of them a record (line 1: expected 17 fields (query type 5, fields 1-17), found 1); it starts: "Error: invalid merchant_pass"`,
    );
    const before = await warehouseChecksum(handle.db);
    const imported = await recon(handle.connectionString, ['import', ...args]);
    expect(imported.code).toBe(2);
    expect(imported.stdout).toBe('');
    expect(imported.stderr).toBe(
      `recon: ${file}: not a report: 1 line, none of them a record (line 1: expected 17 fields (query type 5, fields 1-17), found 1); it starts: "Error: invalid merchant_pass"\n`,
    );
    expect(await warehouseChecksum(handle.db)).toEqual(before);
  });
});
