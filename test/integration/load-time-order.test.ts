import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadReport } from '../../ingest/load/load-report.ts';
import { reportJsonChunks } from '../../sandbox/formats/report-json.ts';
import type { TransactionRecord } from '../../domain/records.ts';
import { useTestDatabase } from '../support/database.ts';
import { transaction } from '../support/ingest-records.ts';

// Time order, not arrival order (issue 25 §2): a final status never goes back to PENDING through a
// load, and the refused change is kept in row_history with its load.

const handle = useTestDatabase();

async function loadJson(name: string, records: TransactionRecord[]) {
  const parts: Buffer[] = [];
  for await (const c of reportJsonChunks(records)) parts.push(typeof c === 'string' ? Buffer.from(c) : c);
  const summary = await loadReport(
    handle,
    {
      source: 'report-transactions',
      format: 'report-json',
      fileName: name,
      origin: 'file',
      environment: 'staging',
    },
    Readable.from([Buffer.concat(parts)]),
  );
  expect(summary.status).toBe('committed');
  return summary;
}

const stored = (id: string) =>
  handle.db
    .selectFrom('provider_transactions')
    .select(['status', 'raw_status', 'fee_cents', 'load_id'])
    .where('transaction_id', '=', id)
    .executeTakeFirstOrThrow();

const history = (id: string) =>
  handle.db
    .selectFrom('row_history')
    .select(['load_id', 'changed_columns', 'refused', 'previous'])
    .where('row_key', '=', id)
    .orderBy('history_id')
    .execute();

describe('a load never moves a final status back to PENDING', () => {
  it('an older file imported after a newer one keeps SUCCESSFUL and records the refused change with its load', async () => {
    const pending = transaction({
      transaction_id: 'TO-1',
      status: 'PENDING',
      raw_status: 'PENDING',
      notify_status: 'I',
    });
    const settled = transaction({ transaction_id: 'TO-1', status: 'SUCCESSFUL', raw_status: 'SUCCESSFUL' });
    const newer = await loadJson('newer.json', [settled]);
    const older = await loadJson('older.json', [pending]);

    expect(await stored('TO-1')).toMatchObject({
      status: 'SUCCESSFUL',
      raw_status: 'SUCCESSFUL',
      load_id: newer.loadId,
    });
    const rows = await history('TO-1');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ load_id: older.loadId, refused: true });
    expect(rows[0]!.changed_columns).toEqual(
      expect.arrayContaining(['status', 'raw_status', 'notify_status']),
    );
    expect(rows[0]!.previous).toMatchObject({
      transaction_id: 'TO-1',
      status: 'PENDING',
      raw_status: 'PENDING',
    });

    // Importing the older file again changes nothing and records nothing more.
    await loadJson('older-again.json', [pending]);
    expect(await history('TO-1')).toHaveLength(1);
    expect(await stored('TO-1')).toMatchObject({ status: 'SUCCESSFUL', load_id: newer.loadId });
  });

  it('PENDING to final, and one final status to another, are still restatements', async () => {
    const first = await loadJson('p.json', [
      transaction({ transaction_id: 'TO-2', status: 'PENDING', raw_status: 'PENDING' }),
    ]);
    const second = await loadJson('s.json', [transaction({ transaction_id: 'TO-2' })]);
    const third = await loadJson('r.json', [
      transaction({ transaction_id: 'TO-2', status: 'REJECTED', raw_status: 'REJECTED' }),
    ]);
    expect(await stored('TO-2')).toMatchObject({ status: 'REJECTED', load_id: third.loadId });
    const rows = await history('TO-2');
    expect(rows.map((r) => [r.load_id, r.refused, (r.previous as { status: string }).status])).toEqual([
      [second.loadId, false, 'PENDING'],
      [third.loadId, false, 'SUCCESSFUL'],
    ]);
    expect(first.loadId).toBeLessThan(second.loadId);
  });
});
