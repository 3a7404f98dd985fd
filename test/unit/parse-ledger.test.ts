import { describe, expect, it } from 'vitest';
import { UnreadableInput } from '../../domain/errors.ts';
import { detectLedgerFormat, parseLedger } from '../../provider/formats/index.ts';
import { collect, fixture, records, rejections, streamOf } from '../support/parse-helpers.ts';

const ledger = (data: string | Buffer, fileName = 'ledger') =>
  collect(parseLedger(streamOf(data, 9), { fileName }));

describe('merchant ledger', () => {
  it('detects NDJSON by a leading { and CSV otherwise', () => {
    expect(detectLedgerFormat(Buffer.from('  \n{"a":1}'))).toBe('ledger-ndjson');
    expect(detectLedgerFormat(Buffer.from('\ufeff{"a":1}'))).toBe('ledger-ndjson');
    expect(detectLedgerFormat(Buffer.from('merchant_transaction_id,'))).toBe('ledger-csv');
    expect(detectLedgerFormat(Buffer.alloc(0))).toBe('ledger-csv');
  });

  it('reads CSV by column name, converts booked_at to UTC and validates like the migration', async () => {
    const rows = await ledger(fixture('ledger/ledger.csv'), 'ledger.csv');
    const ok = records(rows.filter((r) => r.ok));
    expect(ok[0]).toEqual({
      kind: 'ledger',
      merchant_transaction_id: 'ORD-300001',
      transaction_type: 'DEBIT',
      amount_cents: 12550,
      currency: 'CAD',
      status: 'SUCCESSFUL',
      booked_at: '2026-03-08T06:59:59.999999Z',
      transaction_id: 'IBT2603080000001',
      original_merchant_transaction_id: null,
      merchant_user_id: 'player-7731',
      product: 'IBT',
      fee_cents: 125,
      description: 'Deposit, web cashier',
    });
    expect(ok[1]).toMatchObject({
      amount_cents: 500000,
      status: 'PENDING',
      fee_cents: null,
      transaction_id: null,
    });
    expect(ok[2]).toMatchObject({
      transaction_type: 'RETURN',
      status: 'RETURNED',
      original_merchant_transaction_id: 'ORD-300001',
      booked_at: '2026-03-20T09:00:00.000000Z',
    });
    expect(rejections(rows)).toEqual([
      { line: 5, reason: "amount_cents: amount '20.15' is not a whole number of cents (digits only)" },
      { line: 6, reason: "status 'DONE' is not one of SUCCESSFUL, PENDING, REJECTED, FAILED, RETURNED" },
      {
        line: 7,
        reason: "booked_at: '2026-03-08T12:00:00' has no time zone (add Z or an offset such as -05:00)",
      },
    ]);
  });

  it('reads NDJSON with the same names, skipping blank lines', async () => {
    const rows = await ledger(fixture('ledger/ledger.ndjson'), 'ledger.ndjson');
    expect(rows.map((r) => [r.line, r.ok])).toEqual([
      [1, true],
      [3, true],
      [4, false],
      [5, false],
      [6, false],
    ]);
    expect(records(rows.slice(0, 2))).toEqual([
      {
        kind: 'ledger',
        merchant_transaction_id: 'ORD-300001',
        transaction_type: 'DEBIT',
        amount_cents: 12550,
        currency: 'CAD',
        status: 'SUCCESSFUL',
        booked_at: '2026-03-08T06:59:59.999999Z',
        transaction_id: 'IBT2603080000001',
        original_merchant_transaction_id: null,
        merchant_user_id: 'player-7731',
        product: 'IBT',
        fee_cents: 125,
        description: 'Deposit, web cashier',
      },
      {
        kind: 'ledger',
        merchant_transaction_id: 'PAY-400001',
        transaction_type: 'CREDIT',
        amount_cents: 500000,
        currency: 'CAD',
        status: 'PENDING',
        booked_at: '2026-11-01T05:30:00.000000Z',
        transaction_id: null,
        original_merchant_transaction_id: null,
        merchant_user_id: null,
        product: null,
        fee_cents: null,
        description: null,
      },
    ]);
    const reasons = rejections(rows).map((r) => r.reason);
    expect(reasons[0]).toBe('amount_cents: amount 20.15 is not a safe integer number of cents');
    expect(reasons[1]).toBe('merchant_transaction_id must be 1-30 characters (got 35)');
    expect(reasons[2]).toMatch(/^not a JSON object: /);
  });

  it('an empty file yields nothing; a CSV without a required column is unreadable', async () => {
    expect(await ledger('')).toEqual([]);
    await expect(ledger('merchant_transaction_id,amount_cents\nM1,100\n', 'l.csv')).rejects.toThrow(
      new UnreadableInput(
        'l.csv',
        1,
        'the ledger CSV header lacks required columns transaction_type, currency, status, booked_at (found 2 columns: merchant_transaction_id, amount_cents)',
      ),
    );
    // A file without its header: the data line is not quoted (it holds a consumer's e-mail).
    await expect(
      ledger(
        'M1,DEBIT,100,CAD,SUCCESSFUL,2026-03-10T15:00:00Z,jane@example.com,001-00011-****4821\n',
        'h.csv',
      ),
    ).rejects.toThrow(
      new UnreadableInput(
        'h.csv',
        1,
        'the ledger CSV header lacks required columns merchant_transaction_id, transaction_type, amount_cents, currency, status, booked_at (found 8 columns: none known and 8 others (not shown))',
      ),
    );
  });
});
