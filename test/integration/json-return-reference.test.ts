import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { loadReport, type LoadRequest } from '../../ingest/load/load-report.ts';
import { up } from '../../migrations/0014_json_returns_external_reference_unknown.ts';
import { reportCsvChunks } from '../../sandbox/formats/report-csv.ts';
import { reportJsonChunks } from '../../sandbox/formats/report-json.ts';
import { useTestDatabase } from '../support/database.ts';
import { bytesOf, returnRecord, rowHistoryOf } from '../support/ingest-records.ts';

/**
 * Issue 25 section 5: a JSON return record has no externalReference (the interface lists its fields;
 * only originalExternalReference). A return loaded from JSON used to get a known null there, and the
 * same window pulled as CSV afterwards restated every return. The column is unknown after a JSON load,
 * and filling it from CSV is not a restatement; migration 0014 marks it so in rows stored before.
 */
const handle = useTestDatabase();

const request = (format: 'report-json' | 'report-csv', fileName: string): LoadRequest => ({
  source: 'report-returns',
  format,
  queryType: format === 'report-csv' ? 'RETURN' : undefined,
  fileName,
  origin: 'pull',
  environment: 'staging',
});

async function text(chunks: AsyncIterable<string | Buffer>): Promise<string> {
  let out = '';
  for await (const c of chunks) out += c.toString();
  return out;
}

async function stored(id: string) {
  return handle.db
    .selectFrom('provider_returns')
    .select([
      'external_reference',
      sql<string[] | null>`unknown_column_names('provider_returns'::regclass, unknown_mask)`.as('unknown'),
    ])
    .where('return_transaction_id', '=', id)
    .executeTakeFirstOrThrow();
}

describe('the external reference of a return loaded from JSON', () => {
  it('is unknown, and the CSV report of the same window fills it without restating the return', async () => {
    const r = returnRecord({ return_transaction_id: 'RJ1', external_reference: 'XR-RJ1' });
    await loadReport(
      handle,
      request('report-json', 'returns.json'),
      bytesOf(await text(reportJsonChunks([r]))),
    );
    expect(await stored('RJ1')).toMatchObject({ external_reference: null });
    expect((await stored('RJ1')).unknown).toContain('external_reference');

    const csv = await loadReport(
      handle,
      request('report-csv', 'returns.csv'),
      bytesOf(await text(reportCsvChunks('RETURN', [r]))),
    );
    expect(csv).toMatchObject({ rowsUpdated: 0 });
    expect(await rowHistoryOf(handle.db, csv.loadId)).toEqual([]);
    expect(await stored('RJ1')).toMatchObject({ external_reference: 'XR-RJ1' });
    expect((await stored('RJ1')).unknown ?? []).not.toContain('external_reference');

    // A JSON load after that leaves the reference the CSV gave.
    await loadReport(
      handle,
      request('report-json', 'again.json'),
      bytesOf(await text(reportJsonChunks([r]))),
    );
    expect(await stored('RJ1')).toMatchObject({ external_reference: 'XR-RJ1' });
  });

  it('migration 0014 marks it unknown in returns a JSON load stored with a known null before', async () => {
    const r = returnRecord({ return_transaction_id: 'RJ2', external_reference: 'XR-RJ2' });
    await loadReport(handle, request('report-json', 'old.json'), bytesOf(await text(reportJsonChunks([r]))));
    // As the loader before this change left it: external_reference known (its bit clear), null.
    await sql`update provider_returns set unknown_mask = nullif(unknown_mask & ~(1::bigint << (select attnum
      from pg_attribute where attrelid = 'provider_returns'::regclass and attname = 'external_reference')), 0)
      where return_transaction_id = 'RJ2'`.execute(handle.db);
    expect((await stored('RJ2')).unknown ?? []).not.toContain('external_reference');

    await up(handle.db);
    expect((await stored('RJ2')).unknown).toContain('external_reference');
    const csv = await loadReport(
      handle,
      request('report-csv', 'after.csv'),
      bytesOf(await text(reportCsvChunks('RETURN', [r]))),
    );
    expect(await rowHistoryOf(handle.db, csv.loadId)).toEqual([]);
    expect(await stored('RJ2')).toMatchObject({ external_reference: 'XR-RJ2' });
  });
});
