import { describe, expect, it } from 'vitest';
import { UnreadableInput } from '../../domain/errors.ts';
import { InvalidParseOption, parseReport } from '../../provider/formats/index.ts';
import type { ReturnRecord, TransactionRecord } from '../../domain/records.ts';
import { collect, fixture, records, rejections, streamOf } from '../support/parse-helpers.ts';

const csv = (data: string | Buffer, queryType: string, fileName = 'report.csv', chunk = 5) =>
  collect(parseReport(streamOf(data, chunk), { format: 'report-csv', queryType, fileName }));

const HEADER =
  'Transaction Date,Transaction Type,Merchant Transaction ID,Transaction ID,Transaction Amount,Currency,Transaction Status,Internal User ID,Transaction Fee,Merchant ID,Request Type,Payment Method,Merchant User ID,Error Code,Error Description,Country,Device Type,External Reference,Product,Payment Notification Status,Payment Region';

describe('CSV report, TRANSACTION', () => {
  it('reads the spec columns with CRLF, quoted commas and microseconds', async () => {
    const rows = await csv(fixture('report/transactions.csv'), 'TRANSACTION');
    expect(rows.map((r) => r.line)).toEqual([2, 3, 4]);
    const [a, b, c] = records(rows) as TransactionRecord[];
    expect(a).toEqual({
      kind: 'transaction',
      transaction_id: 'IBT2603080000001',
      merchant_id: '10001',
      merchant_transaction_id: 'ORD-300001',
      merchant_user_id: 'player-7731',
      product_user_id: 'PU-88120',
      product: 'IBT',
      transaction_type: 'DEBIT',
      raw_transaction_type: 'DEBIT',
      status: 'SUCCESSFUL',
      raw_status: 'SUCCESSFUL',
      amount_cents: 12550,
      fee_cents: 125,
      currency: 'CAD',
      transaction_at: '2026-03-08T07:30:00.123456Z',
      transaction_on: '2026-03-08',
      local_time_flag: null,
      error_code: null,
      error_message: null,
      notify_status: 'C',
      region: 'ON',
      country_code: 'CA',
      payment_method: 'EFT',
      external_reference: 'EXT-55001',
      device_type: 'DESKTOP',
      request_type: 'Interactive',
      raw: '2026-03-08T07:30:00.123456Z,DEBIT,ORD-300001,IBT2603080000001,12550,CAD,SUCCESSFUL,PU-88120,125,10001,Interactive,EFT,player-7731,,,CA,DESKTOP,EXT-55001,IBT,C,ON',
    });
    expect([b?.transaction_at, b?.transaction_on, b?.status]).toEqual([
      '2026-11-01T05:30:00.000000Z',
      '2026-11-01',
      'PENDING',
    ]);
    expect([c?.transaction_at, c?.transaction_on, c?.error_message, c?.amount_cents]).toEqual([
      '2026-11-02T04:59:59.500000Z',
      '2026-11-01',
      'Consumer must re-authenticate, interactive flow required',
      100,
    ]);
  });

  it('matches columns by name: reordered, extra columns kept in raw, header alone yields nothing', async () => {
    expect(await csv(fixture('report/transactions-reordered-header-only.csv'), 'TRANSACTION')).toEqual([]);
    const text =
      ' transaction id ,Transaction Amount,CURRENCY,Transaction Status,Transaction Type,Transaction Date,Batch Number\nT9,0000150000,USD,PENDING,CREDIT,2026-07-01T16:00:00+00:00,B-77';
    const rows = await csv(text, 'TRANSACTION');
    expect(records(rows)[0]).toMatchObject({
      transaction_id: 'T9',
      amount_cents: 150000,
      currency: 'USD',
      status: 'PENDING',
      raw_status: 'PENDING',
      transaction_type: 'CREDIT',
      raw_transaction_type: 'CREDIT',
      transaction_at: '2026-07-01T16:00:00.000000Z',
      transaction_on: '2026-07-01',
      merchant_id: null,
      fee_cents: null,
    });
    expect(rows[0]?.raw).toBe('T9,0000150000,USD,PENDING,CREDIT,2026-07-01T16:00:00+00:00,B-77');
  });

  it('rejects rows with a reason: field count, non-digit amount, impossible date', async () => {
    const line = (date: string, amount: string) =>
      `${date},DEBIT,M1,T1,${amount},CAD,SUCCESSFUL,PU,0,10001,Direct,EFT,usr1,,,CA,DESKTOP,E1,IBT,C,ON`;
    const text = [
      HEADER,
      line('2026-03-08T07:30:00Z', '12.50'),
      line('2026-02-30T07:30:00Z', '100'),
      '2026-03-08T07:30:00Z,DEBIT,M1,T1,100',
      line('2026-03-08T07:30:00Z', '100'),
      `${line('2026-03-08T07:30:00Z', '100').replace('Direct', '"Dir"ect')}`,
    ].join('\n');
    const rows = await csv(text, 'TRANSACTION', 'bad.csv');
    expect(rejections(rows)).toEqual([
      { line: 2, reason: "Transaction Amount: amount '12.50' is not a whole number of cents (digits only)" },
      { line: 3, reason: "Transaction Date: '2026-02-30T07:30:00Z' is not a date-time that exists" },
      { line: 4, reason: 'expected 21 fields as in the header (line 1), found 5' },
      {
        line: 6,
        reason: 'malformed quoting (a double quote inside an unquoted field, or text after a closing quote)',
      },
    ]);
    expect(rows.filter((r) => r.ok).map((r) => r.line)).toEqual([5]);
  });

  it('reads a quoted field spanning lines, and numbers the next record right', async () => {
    const text = `${HEADER}\r\n2026-03-08T07:30:00Z,DEBIT,M1,T1,100,CAD,REJECTED,PU,0,10001,Direct,EFT,usr1,E1,"line one,\r\nline two",CA,DESKTOP,E1,IBT,C,ON\r\n2026-03-08T07:30:01Z,DEBIT,M2,T2,200,CAD,SUCCESSFUL,PU,0,10001,Direct,EFT,usr1,,,CA,DESKTOP,E1,IBT,C,ON`;
    const rows = await csv(text, 'TRANSACTION');
    expect(rows.map((r) => [r.line, r.ok])).toEqual([
      [2, true],
      [4, true],
    ]);
    expect(records(rows)[0]).toMatchObject({ error_message: 'line one,\nline two' });
  });

  it('throws UnreadableInput for a missing required column, an empty file, an unclosed quote', async () => {
    await expect(
      csv('Transaction ID,Transaction Amount\nT1,100\n', 'TRANSACTION', 'cols.csv'),
    ).rejects.toThrow(
      new UnreadableInput(
        'cols.csv',
        1,
        "the TRANSACTION CSV header lacks required columns 'Transaction Date', 'Transaction Type', 'Currency', 'Transaction Status' (found 2 columns: Transaction ID, Transaction Amount); is --query-type right?",
      ),
    );
    // A file without its header: the first data line is taken for the header and never quoted.
    const dataLine =
      '2026-03-08T07:30:00Z,DEBIT,M1,T1,100,CAD,SUCCESSFUL,jane@example.com,AT0123456789abcdef';
    await expect(csv(`${dataLine}\n`, 'TRANSACTION', 'nohead.csv')).rejects.toThrow(
      new UnreadableInput(
        'nohead.csv',
        1,
        "the TRANSACTION CSV header lacks required columns 'Transaction Date', 'Transaction Type', 'Transaction ID', 'Transaction Amount', 'Currency', 'Transaction Status' (found 9 columns: none known and 9 others (not shown)); is --query-type right?",
      ),
    );
    await expect(csv('', 'TRANSACTION', 'empty.csv')).rejects.toThrow(
      'empty.csv: the file is empty: a TRANSACTION CSV report starts with its header row',
    );
    await expect(csv(`${HEADER}\n2026-03-08T07:30:00Z,DEBIT,"M1`, 'TRANSACTION', 'q.csv')).rejects.toThrow(
      'q.csv:2: a quoted field opened on this line is never closed (truncated input?)',
    );
  });

  it('reads a streamed ZIP with data descriptors and Zip64 local headers', async () => {
    expect(await csv(fixture('report/transactions-csv-streamed-zip64.bin'), 'TRANSACTION')).toEqual(
      await csv(fixture('report/transactions.csv'), 'TRANSACTION'),
    );
  });

  it('refuses a missing or wrong query type before reading', () => {
    expect(() => parseReport(streamOf(''), { format: 'report-csv', fileName: 'x.csv' })).toThrow(
      InvalidParseOption,
    );
    expect(() =>
      parseReport(streamOf(''), { format: 'report-csv', queryType: '5', fileName: 'x.csv' }),
    ).toThrow("report-csv needs --query-type TRANSACTION or RETURN (got '5')");
  });
});

describe('CSV report, RETURN', () => {
  it('reads returns and rejects rows that do not line up with the header', async () => {
    const rows = await csv(fixture('report/returns.csv'), 'RETURN');
    expect(rejections(rows)).toEqual([
      { line: 3, reason: 'expected 21 fields as in the header (line 1), found 20' },
    ]);
    const [a, c] = records(rows.filter((r) => r.ok)) as ReturnRecord[];
    expect(a).toEqual({
      kind: 'return',
      return_transaction_id: 'IBT2603200000009',
      original_transaction_id: 'IBT2603080000001',
      merchant_transaction_id: 'ORD-300001',
      merchant_id: '10001',
      merchant_user_id: 'player-7731',
      product_user_id: 'PU-88120',
      product: 'IBT',
      return_code: '901',
      amount_cents: 12550,
      currency: 'CAD',
      returned_on: '2026-03-20',
      next_action_date: '2026-03-27',
      raw_next_action_date: '2026-03-27',
      settlement_code: 'RTN',
      raw_transaction_type: 'RETURN',
      original_transaction_type: null,
      original_transaction_at: '2026-03-08T06:59:59.999999Z',
      original_external_reference: null,
      external_reference: 'EXT-56001',
      notify_status: 'C',
      region: 'ON',
      country_code: 'CA',
      legacy_field_8: null,
      legacy_field_9: null,
      report_date: null,
      settlement_date: '2026-03-20',
      last_updated_on: null,
      raw: '2026-03-20,RTN,901,ORD-300001,IBT2603200000009,12550,2026-03-27,RETURN,10001,Interactive,CA,CAD,DESKTOP,player-7731,EXT-56001,2026-03-08T06:59:59.999999Z,IBT2603080000001,IBT,PU-88120,C,ON',
    });
    // A next action date that is not a date is kept raw only.
    expect([c?.next_action_date, c?.raw_next_action_date, c?.amount_cents]).toEqual([null, 'N/A', 990]);
  });

  it('reads a ZIP with data descriptors', async () => {
    expect(await csv(fixture('report/returns-csv-data-descriptor.zip'), 'RETURN')).toEqual(
      await csv(fixture('report/returns.csv'), 'RETURN'),
    );
  });
});
