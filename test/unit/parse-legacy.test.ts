import { describe, expect, it } from 'vitest';
import { parseReport, InvalidParseOption } from '../../provider/formats/index.ts';
import type { AdjustmentRecord, LegacyTransactionRecord, ReturnRecord } from '../../domain/records.ts';
import { collect, fixture, records, rejections, streamOf } from '../support/parse-helpers.ts';

/** A valid type 1 line: a file with no record at all is no report (test/unit/parse-not-a-report.test.ts). */
const RETURN_LINE = '20260320,4,901,ORD-100001,RT2603200001,0000012550,CAD,,,ET2601150001,player-7731,CA';

const legacy = (file: string, queryType: string, fields?: number[], chunk = 7) =>
  collect(
    parseReport(streamOf(fixture(file), chunk), { format: 'legacy', queryType, fields, fileName: file }),
  );

describe('legacy type 5, default fields 1-17', () => {
  it('converts every field: cents, Eastern to UTC with DST flags, raw codes', async () => {
    const rows = await legacy('legacy/type5-default.csv', '5');
    expect(rows.map((r) => r.line)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const recs = records(rows) as LegacyTransactionRecord[];
    expect(recs[0]).toEqual({
      kind: 'legacy-transaction',
      transaction_id: 'ET2601150001',
      transaction_on: '2026-01-15',
      raw_transaction_type: 'D',
      merchant_transaction_id: 'ORD-100001',
      amount_cents: 12550,
      currency: 'CAD',
      status: 'SUCCESSFUL',
      raw_status: 'S',
      internal_user_id: 'IU00017',
      fee_cents: 125,
      merchant_account_id: 'MERCH001',
      error_code: null,
      raw_notify_status: 'C',
      merchant_user_id: 'player-7731',
      raw_transaction_time: '093000',
      transaction_at: '2026-01-15T14:30:00.000000Z',
      local_time_flag: null,
      country_code: 'CA',
      consumer_email: 'jane.doe@example.com',
      bank_account_masked: '001-00011-****4821',
      return_code: null,
      returned_on: null,
      completed_on: null,
      payment_type: null,
      network_reference: null,
      query_type: '5',
      raw: '20260115,D,ORD-100001,ET2601150001,0000012550,CAD,S,IU00017,0000000125,MERCH001,,C,player-7731,093000,CA,jane.doe@example.com,001-00011-****4821',
    });
    expect(
      recs.map((r) => [
        r.transaction_id,
        r.amount_cents,
        r.transaction_at,
        r.local_time_flag,
        r.status,
        r.raw_status,
      ]),
    ).toEqual([
      ['ET2601150001', 12550, '2026-01-15T14:30:00.000000Z', null, 'SUCCESSFUL', 'S'],
      ['ET2601150002', 500000, '2026-01-16T04:59:59.000000Z', null, 'SUCCESSFUL', 'S'],
      ['ET2603080001', 2015, '2026-03-08T06:59:59.000000Z', null, 'SUCCESSFUL', 'S'],
      ['ET2603080002', 10000, '2026-03-08T07:30:00.000000Z', 'dst_gap', 'FAILED', 'F'],
      ['ET2603080003', 3333, '2026-03-08T07:00:00.000000Z', null, 'SUCCESSFUL', 'S'],
      ['ET2611010001', 25000, '2026-11-01T04:59:59.000000Z', null, 'SUCCESSFUL', 'S'],
      ['ET2611010002', 7500, '2026-11-01T05:30:00.000000Z', 'dst_fold', 'SUCCESSFUL', 'S'],
      ['ET2611010003', 1999, '2026-11-01T07:00:00.000000Z', null, 'FAILED', 'R'],
    ]);
    // Error code kept raw on a failed row; CRLF never leaks into a value or raw.
    expect(recs[3]?.error_code).toBe('51');
    expect(rows.every((r) => !r.raw.includes('\r'))).toBe(true);
  });

  it('gives the same rows whatever the chunking (one byte, whole file)', async () => {
    const whole = await legacy('legacy/type5-default.csv', '5', undefined, 1 << 20);
    const bytes = await legacy('legacy/type5-default.csv', '5', undefined, 1);
    expect(bytes).toEqual(whole);
  });

  it('reads a ZIP (Zip64 extra fields) named .csv by its content', async () => {
    const zipped = await legacy('legacy/type5-default-zipped.csv', '5');
    const plain = await legacy('legacy/type5-default.csv', '5');
    expect(zipped).toEqual(plain);
  });

  it('rejects bad rows with a reason naming the field and goes on', async () => {
    const rows = await legacy('legacy/type5-bad-rows.csv', '5');
    expect(rejections(rows)).toEqual([
      { line: 1, reason: "field 1 (transaction date) '20260230' is not a date that exists" },
      {
        line: 2,
        reason:
          "field 5 (amount): amount '20.15' is not digits only (implied decimals: 20.15 is written 2015)",
      },
      { line: 3, reason: "field 6 (currency) 'cad' is not three uppercase letters (ISO 4217)" },
      { line: 4, reason: 'expected 17 fields (query type 5, fields 1-17), found 15' },
      { line: 5, reason: 'field 3 (merchant transaction ID) is 34 characters long; the limit is 30' },
      { line: 6, reason: "field 14 (transaction time): time '126000' does not exist" },
    ]);
    // Line 7 is blank (no record); line 8 loads.
    expect(rows.filter((r) => r.ok).map((r) => r.line)).toEqual([8]);
    expect(rows[0]?.raw).toBe(
      '20260230,D,ORD-900001,ET9000000001,0000001000,CAD,S,IU1,0000000000,MERCH001,,C,player-1,120000,CA,a@example.com,001-00011-****0001',
    );
  });
});

describe('legacy type 6 and response_fields selections', () => {
  it('reads type 6 defaults 1-19 with return code and return date', async () => {
    const recs = records(await legacy('legacy/type6-default.csv', '6')) as LegacyTransactionRecord[];
    expect(
      recs.map((r) => [
        r.transaction_id,
        r.amount_cents,
        r.status,
        r.return_code,
        r.returned_on,
        r.query_type,
      ]),
    ).toEqual([
      ['ET2603100001', 150000, 'SUCCESSFUL', null, null, '6'],
      ['ET2603110001', 20000, 'FAILED', '901', '2026-03-16', '6'],
    ]);
    expect(recs[1]?.transaction_at).toBe('2026-03-11T16:00:00.000000Z');
  });

  it('reads columns in the order listed, with fields 20-22 when listed', async () => {
    const fields = [4, 1, 2, 5, 6, 7, 14, 20, 21, 22];
    const recs = records(
      await legacy('legacy/type5-fields-4-1-2-5-6-7-14-20-21-22.csv', '5', fields),
    ) as LegacyTransactionRecord[];
    expect(recs[0]).toMatchObject({
      transaction_id: 'ET2603120001',
      transaction_on: '2026-03-12',
      raw_transaction_type: 'D',
      amount_cents: 4500,
      currency: 'CAD',
      status: 'SUCCESSFUL',
      transaction_at: '2026-03-12T19:45:02.000000Z',
      completed_on: '2026-03-13',
      payment_type: 'INTERAC',
      network_reference: 'CA1234567890ABCDEF',
      // Not selected: null, never guessed.
      merchant_transaction_id: null,
      fee_cents: null,
      merchant_user_id: null,
    });
    expect(recs[1]).toMatchObject({
      amount_cents: 100,
      currency: 'USD',
      completed_on: null,
      payment_type: null,
    });
  });

  it('leaves transaction_at null when field 14 is not selected', async () => {
    const rows = await collect(
      parseReport(streamOf('20260312,D,ET1,0000000100\n'), {
        format: 'legacy',
        queryType: '5',
        fields: [1, 2, 4, 5],
        fileName: 'sel.csv',
      }),
    );
    expect(records(rows)[0]).toMatchObject({
      transaction_at: null,
      local_time_flag: null,
      raw_transaction_time: null,
    });
  });

  it('refuses bad selections before reading', () => {
    const call = (queryType: string, fields?: number[]) => () =>
      parseReport(streamOf(''), { format: 'legacy', queryType, fields, fileName: 'x.csv' });
    expect(call('5', [1, 2, 4, 19])).toThrow(
      new InvalidParseOption('--fields: field 19 (return date) is not valid for query type 5 (spec 4.6)'),
    );
    expect(call('6', [1, 2, 4, 4])).toThrow('--fields: field 4 is listed twice');
    expect(call('6', [1, 2, 4, 23])).toThrow(
      "--fields: '23' is not a legacy transaction field number (1-22)",
    );
    expect(call('5', [1, 2, 5])).toThrow('missing 4');
    expect(call('1', [1, 2, 4])).toThrow('--fields applies only to legacy query types 5 and 6');
    expect(call('7')).toThrow("legacy query type '7' is not supported");
    expect(call('6', [1, 2, 4, 19])).not.toThrow();
  });
});

describe('legacy type 1 returns', () => {
  it('maps fields to provider_returns columns, fields 8 and 9 kept raw', async () => {
    const rows = await legacy('legacy/type1-returns.csv', '1');
    const recs = records(rows) as ReturnRecord[];
    expect(recs[1]).toEqual({
      kind: 'return',
      return_transaction_id: 'RT2603210001',
      original_transaction_id: 'ET2603080003',
      merchant_transaction_id: 'ORD-100004',
      merchant_id: null,
      merchant_user_id: 'player-0042',
      product_user_id: null,
      product: null,
      return_code: '905',
      amount_cents: 3333,
      currency: 'CAD',
      returned_on: '2026-03-21',
      next_action_date: null,
      raw_next_action_date: null,
      settlement_code: null,
      raw_transaction_type: '4',
      original_transaction_type: null,
      original_transaction_at: null,
      original_external_reference: null,
      external_reference: null,
      notify_status: null,
      region: null,
      country_code: 'CA',
      legacy_field_8: 'X1',
      legacy_field_9: '20260321',
      // Field 1 is the last-updated date: kept apart from a report's date (migration 0029).
      report_date: null,
      settlement_date: null,
      last_updated_on: '2026-03-21',
      raw: '20260321,4,905,ORD-100004,RT2603210001,0000003333,CAD,X1,20260321,ET2603080003,player-0042,CA',
    });
    expect(recs[0]).toMatchObject({ amount_cents: 12550, legacy_field_8: null, legacy_field_9: null });
  });

  it('reads a stored (uncompressed) ZIP', async () => {
    expect(await legacy('legacy/type1-returns-stored.zip', '1')).toEqual(
      await legacy('legacy/type1-returns.csv', '1'),
    );
  });

  it('rejects a return row with the wrong number of fields', async () => {
    const rows = await collect(
      parseReport(streamOf(`20260320,4,901,ORD-1,RT1,0000012550,CAD,ET1,player,CA\n${RETURN_LINE}\n`), {
        format: 'legacy',
        queryType: '1',
        fileName: 'r.csv',
      }),
    );
    expect(rejections(rows)).toEqual([
      { line: 1, reason: 'expected 12 fields (query type 1 returns, fields 1-12), found 10' },
    ]);
  });
});

describe('legacy type 4 adjustments', () => {
  it('keeps signed cents, joins unquoted commas into the notes, keys without the occurrence suffix', async () => {
    const recs = records(await legacy('legacy/type4-adjustments.csv', '4')) as AdjustmentRecord[];
    expect(
      recs.map((r) => [
        r.adjusted_on,
        r.adjustment_type,
        r.transaction_id,
        r.amount_cents,
        r.fee_cents,
        r.notes,
      ]),
    ).toEqual([
      ['2026-03-31', 'F', 'ET2603080001', -125, 0, 'Fee reversal'],
      ['2026-03-31', 'C', null, 50000, 0, 'Chargeback adjustment, case 7781'],
      ['2026-03-31', 'F', 'ET2603080001', -125, 0, 'Fee reversal'],
    ]);
    expect(recs[0]?.adjustment_key).toMatch(/^[0-9a-f]{64}$/);
    // Identical rows share the key: the loader tells them apart with '#n'.
    expect(recs[2]?.adjustment_key).toBe(recs[0]?.adjustment_key);
    expect(recs[1]?.adjustment_key).not.toBe(recs[0]?.adjustment_key);
    // sha256 of ["2026-03-31","A","F","ET2603080001",-125,"CAD",0,"MERCH001","Fee reversal"]
    expect(recs[0]?.adjustment_key).toBe('747d57d6bad649ea3c680b42cf202f17ccf707dfe4b77e9e938a2b9f7f00266b');
  });

  it('reads a quoted notes field and rejects a too-short row', async () => {
    const rows = await collect(
      parseReport(
        streamOf(
          '20260331,A,F,ET1,0000000100,CAD,,MERCH001,"Refund, ""goodwill"""\n20260331,A,F,ET1,0000000100\n',
        ),
        {
          format: 'legacy',
          queryType: '4',
          fileName: 'a.csv',
        },
      ),
    );
    expect(rows[0]?.ok && rows[0].record).toMatchObject({ notes: 'Refund, "goodwill"', fee_cents: null });
    expect(rejections(rows)).toEqual([
      { line: 2, reason: 'expected 9 fields (query type 4 adjustments, fields 1-9), found 5' },
    ]);
  });
});

describe('legacy edge cases', () => {
  it('an empty file and a file of blank lines yield nothing', async () => {
    for (const text of ['', '\n', '\r\n\r\n']) {
      expect(
        await collect(parseReport(streamOf(text), { format: 'legacy', queryType: '5', fileName: 'e.csv' })),
      ).toEqual([]);
    }
  });

  it('drops a UTF-8 byte-order mark and numbers lines after blank ones', async () => {
    const text =
      '\ufeff20260320,4,901,M,RT1,0000000100,CAD,,,ET1,u,CA\n\n20260320,4,901,M,RT2,0000000100,CAD,,,ET2,u,CA';
    const rows = await collect(
      parseReport(streamOf(text, 3), { format: 'legacy', queryType: '1', fileName: 'b.csv' }),
    );
    expect(rows.map((r) => [r.line, r.ok])).toEqual([
      [1, true],
      [3, true],
    ]);
  });
});
