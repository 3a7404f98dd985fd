import { describe, expect, it } from 'vitest';
import { UnreadableInput } from '../../domain/errors.ts';
import { parseReport } from '../../provider/formats/index.ts';
import { JsonArraySplitter } from '../../provider/formats/split-json-array.ts';
import type { ReturnRecord, TransactionRecord } from '../../domain/records.ts';
import { collect, fixture, rejections, streamOf } from '../support/parse-helpers.ts';

const json = (data: string | Buffer, fileName = 'report.json', chunk = 7) =>
  collect(parseReport(streamOf(data, chunk), { format: 'report-json', fileName }));

describe('JSON report', () => {
  it('tells transactions from returns and keeps microseconds', async () => {
    const rows = await json(fixture('report/transactions-and-returns.json'));
    expect(rows.map((r) => [r.line, r.ok])).toEqual([
      [2, true],
      [23, true],
      [44, true],
      [45, true],
      [67, true],
      [68, false],
      [69, false],
    ]);
    const ok = rows.filter((r) => r.ok).map((r) => r.record);
    const [t1, t2, t3, r1, r2] = ok as [
      TransactionRecord,
      TransactionRecord,
      TransactionRecord,
      ReturnRecord,
      ReturnRecord,
    ];
    expect(t1).toMatchObject({
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
      transaction_at: '2026-03-08T06:59:59.999999Z',
      transaction_on: '2026-03-08',
      local_time_flag: null,
      error_code: null,
      error_message: null,
      notify_status: 'C',
      region: 'ON',
      country_code: 'CA',
      payment_method: 'EFT',
      external_reference: 'EXT-55001',
      device_type: null,
      request_type: null,
    });
    expect(t1.raw.startsWith('{\n    "product": "IBT",')).toBe(true);
    expect(t1.raw.endsWith('"transactionPaymentMethod": "EFT"\n  }')).toBe(true);
    // 05:30Z on Nov 1 is 01:30 EDT: still Nov 1 in Toronto; 04:59:59.5Z on Nov 2 is Nov 1 23:59 EST.
    expect([t2.transaction_at, t2.transaction_on, t2.status, t2.transaction_type]).toEqual([
      '2026-11-01T05:30:00.000123Z',
      '2026-11-01',
      'PENDING',
      'CREDIT',
    ]);
    expect([t3.transaction_at, t3.transaction_on, t3.status, t3.error_code, t3.device_type]).toEqual([
      '2026-11-02T04:59:59.500000Z',
      '2026-11-01',
      'REJECTED',
      'E302',
      'MOBILE',
    ]);
    expect(t3.error_message).toBe('Consumer must re-authenticate with the bank, "interactive" flow required');
    expect(r1).toMatchObject({
      kind: 'return',
      return_transaction_id: 'IBT2603200000009',
      original_transaction_id: 'IBT2603080000001',
      merchant_transaction_id: 'ORD-300001',
      return_code: '901',
      amount_cents: 12550,
      currency: 'CAD',
      returned_on: '2026-03-20',
      next_action_date: '2026-03-27',
      raw_next_action_date: '2026-03-27',
      settlement_code: 'RTN',
      raw_transaction_type: 'RETURN',
      original_transaction_type: 'DEBIT',
      original_transaction_at: '2026-03-08T06:59:59.999999Z',
      original_external_reference: 'EXT-55001',
      notify_status: 'C',
      legacy_field_8: null,
      report_date: '2026-03-20',
      settlement_date: null,
      last_updated_on: null,
    });
    // Unknown extra fields (with brackets inside strings) are tolerated and stay in raw.
    expect([r2.next_action_date, r2.raw_next_action_date, r2.original_transaction_at]).toEqual([
      null,
      null,
      '2026-03-01T15:00:00.250000Z',
    ]);
    expect(r2.raw).toContain('"someNewField":{"nested":[1,2,"]"]}');
    // A report status outside the published words is not stored (issue 25 section 4).
    expect(rejections(rows)).toEqual([
      {
        line: 68,
        reason: "transactionAmount: amount '12.50' (a string) is not a JSON integer number of cents",
      },
      {
        line: 69,
        reason:
          "transactionStatus 'ON_HOLD' is not one of the provider's values (SUCCESSFUL, PENDING, REJECTED)",
      },
    ]);
  });

  it('gives the same rows for one-byte chunks and the zipped file', async () => {
    const plain = await json(fixture('report/transactions-and-returns.json'), 'r.json', 1 << 20);
    expect(await json(fixture('report/transactions-and-returns.json'), 'r.json', 1)).toEqual(plain);
    expect(await json(fixture('report/transactions-and-returns.json.zip'), 'r.json')).toEqual(plain);
  });

  it('rejects elements that do not validate, naming the field', async () => {
    const base = {
      transactionId: 'T1',
      transactionType: 'DEBIT',
      transactionStatus: 'SUCCESSFUL',
      transactionAmount: 100,
      currencyCode: 'CAD',
      transactionDateTime: '2026-03-08T07:30:00.123456Z',
    };
    const cases: [unknown, string][] = [
      [
        { ...base, transactionAmount: 12.5 },
        'transactionAmount: amount 12.5 is not written as an integer number of cents',
      ],
      [
        { ...base, transactionAmount: 1e21 },
        'transactionAmount: amount 1e+21 is not written as an integer number of cents',
      ],
      [{ ...base, currencyCode: 'cad' }, "currencyCode 'cad' is not three uppercase letters (ISO 4217)"],
      [{ ...base, transactionId: undefined }, 'transactionId is missing; a non-empty string is required'],
      [
        { ...base, transactionDateTime: '2026-02-30T00:00:00Z' },
        "transactionDateTime: '2026-02-30T00:00:00Z' is not a date-time that exists",
      ],
      [
        { ...base, transactionFee: '5' },
        "transactionFee: amount '5' (a string) is not a JSON integer number of cents",
      ],
      [{ ...base, merchantId: { id: 1 } }, 'merchantId is of type object; a string is expected'],
      [42, 'array element is not a JSON object'],
      [[base], 'array element is not a JSON object'],
      [null, 'array element is not a JSON object'],
    ];
    // One valid element: a report of which no element is a record is no report (NotAReport).
    const text = `[${[...cases.map(([value]) => value), base].map((value) => JSON.stringify(value)).join(',\n')}]`;
    const rows = await json(text);
    expect(rejections(rows)).toEqual(cases.map(([, reason], i) => ({ line: i + 1, reason })));
  });

  it('rejects amounts not written as integer literals, as the text has them (issue 15)', async () => {
    const el = (amount: string, fee = '25') =>
      `{"transactionId":"T1","transactionType":"DEBIT","transactionStatus":"SUCCESSFUL","transactionAmount":${amount},"transactionFee":${fee},"currencyCode":"CAD","transactionDateTime":"2026-03-08T07:30:00.123456Z"}`;
    const text = `[${[
      el('1.0000000000000001'),
      el('-0'),
      el('100.0'),
      el('1E2'),
      el('100', '-0'),
      el('100', '2.50'),
      el('12345678901234567890'),
      el('0', '0'),
    ].join(',\n')}]`;
    const rows = await json(text);
    const not = (field: string, amount: string) =>
      `${field}: amount ${amount} is not written as an integer number of cents`;
    expect(rejections(rows)).toEqual([
      { line: 1, reason: not('transactionAmount', '1.0000000000000001') },
      { line: 2, reason: not('transactionAmount', '-0') },
      { line: 3, reason: not('transactionAmount', '100.0') },
      { line: 4, reason: not('transactionAmount', '1E2') },
      { line: 5, reason: not('transactionFee', '-0') },
      { line: 6, reason: not('transactionFee', '2.50') },
      {
        line: 7,
        reason: 'transactionAmount: amount 12345678901234567000 is not a safe integer number of cents',
      },
    ]);
    const ok = rows.filter((r) => r.ok);
    expect(ok.map((r) => r.line)).toEqual([8]);
    const record = ok[0]!.record as TransactionRecord;
    expect([record.amount_cents, record.fee_cents]).toEqual([0, 0]);
  });

  it('judges the amount as written however the key and the literal are spelled', async () => {
    // The parser skips JSON.parse's reviver when the text shows it would change nothing: a key
    // written with a \\u escape, spaces around the colon, or a key that merely ends in an amount's
    // name must not get a non-integer amount through.
    const el = (amountPart: string) =>
      `{"transactionId":"T1","transactionType":"DEBIT","transactionStatus":"SUCCESSFUL",${amountPart},"transactionFee":25,"currencyCode":"CAD","transactionDateTime":"2026-03-08T07:30:00.123456Z","errorMessage":"\\"transactionAmount\\": 1.5"}`;
    const text = `[${[
      el('"transaction\\u0041mount":100.0'),
      el('"transactionAmount" :\n 100.5'),
      el('"transactionAmount":1500'),
      el('"transaction\\u0041mount":1500'),
    ].join(',\n')}]`;
    const rows = await json(text);
    const not = (amount: string) =>
      `transactionAmount: amount ${amount} is not written as an integer number of cents`;
    expect(rejections(rows)).toEqual([
      { line: 1, reason: not('100.0') },
      { line: 2, reason: not('100.5') },
    ]);
    const ok = rows.filter((r) => r.ok);
    expect(ok.map((r) => (r.record as TransactionRecord).amount_cents)).toEqual([1500, 1500]);
  });

  it('yields nothing for [] and throws for an empty file', async () => {
    expect(await json('[]')).toEqual([]);
    expect(await json(' \n[\n]\n')).toEqual([]);
    await expect(json('', 'empty.json')).rejects.toThrow(
      new UnreadableInput(
        'empty.json',
        null,
        'the file is empty: a JSON report is an array, and a report without records is []',
      ),
    );
  });

  it('throws UnreadableInput naming file and line for JSON broken half-way', async () => {
    const good =
      '{"transactionId":"T1","transactionType":"DEBIT","transactionStatus":"SUCCESSFUL","transactionAmount":100,"currencyCode":"CAD","transactionDateTime":"2026-03-08T07:30:00Z"}';
    const truncated = `[\n${good},\n${good.slice(0, 40)}`;
    await expect(json(truncated, 'cut.json')).rejects.toThrow(
      'cut.json:3: the JSON array ends before it is closed (truncated input?)',
    );
    // Rows before the break are yielded first; the loader decides to keep nothing.
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const row of parseReport(streamOf(truncated), {
          format: 'report-json',
          fileName: 'cut.json',
        })) {
          seen.push(row.line);
        }
      })(),
    ).rejects.toBeInstanceOf(UnreadableInput);
    expect(seen).toEqual([2]);
    // Whole-file chunks: the message quotes up to 20 characters of what was found.
    const whole = (text: string, name: string) => json(text, name, 1 << 20);
    await expect(whole(`[\n${good}\n${good}]`, 'g.json')).rejects.toThrow(
      `g.json:3: expected ',' or ']' after an element but found '${good.slice(0, 20)}'`,
    );
    await expect(whole(`[${good}]\ngarbage`, 'g.json')).rejects.toThrow(
      "g.json:2: unexpected 'garbage' after the end of the array",
    );
    await expect(whole(`[\n{"a" 1}]`, 'g.json')).rejects.toThrow(
      /^g\.json:2: invalid JSON in the array element starting here/,
    );
    await expect(whole(`[${good},]`, 'g.json')).rejects.toThrow("g.json:1: expected a value but found ']'");
    await expect(whole('{"errorCode":"V026","errorMessage":"x"}', 'e.json')).rejects.toThrow(
      `e.json:1: expected a JSON array ('[') but found '{"errorCode":"V026",'`,
    );
  });
});

describe('JsonArraySplitter', () => {
  it('splits elements across chunks, with strings holding brackets, escapes and newlines counted', () => {
    const splitter = new JsonArraySplitter('s.json');
    const text = '[\n {"a":"x\\"}]{[","b":[1,{"c":2}]},\n\n "str\\\\", 12.5e3 ,true,null,[1,[2]]\n]';
    const out = [];
    for (const ch of text) out.push(...splitter.push(ch));
    out.push(...splitter.finish());
    expect(out).toEqual([
      { text: '{"a":"x\\"}]{[","b":[1,{"c":2}]}', line: 2 },
      { text: '"str\\\\"', line: 4 },
      { text: '12.5e3', line: 4 },
      { text: 'true', line: 4 },
      { text: 'null', line: 4 },
      { text: '[1,[2]]', line: 4 },
    ]);
  });
});
