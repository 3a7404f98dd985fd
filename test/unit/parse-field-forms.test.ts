import { describe, expect, it } from 'vitest';
import type { LegacyTransactionRecord } from '../../domain/records.ts';
import { parseReport } from '../../provider/formats/index.ts';
import { collect, fixture, records, rejections, streamOf } from '../support/parse-helpers.ts';

/**
 * Issue 25 section 4 and issue 26 section 6: a value outside its field's form is not stored, so a
 * row cut short inside its last field is rejected (before: stored with region `O`, country `C`), and
 * report and legacy rows respect the provider's limits (before: a 3,000-character merchant
 * transaction id was loaded). Values whose form the provider does not show are kept raw.
 */
const lines = (path: string) =>
  fixture(path)
    .toString('utf8')
    .split(/\r?\n/)
    .filter((l) => l !== '');
const parse = (text: string, format: 'legacy' | 'report-csv' | 'report-json', queryType?: string) =>
  collect(parseReport(streamOf(text, 5), { format, queryType, fileName: 'f' }));

describe('a body cut short inside its last record', () => {
  it('CSV report: a region cut to one letter rejects the last row; the others load', async () => {
    const [header, ...rows] = lines('report/transactions.csv');
    const whole = rows.filter((r) => r.endsWith(',ON') || r.endsWith(',QC') || r.endsWith(',BC'));
    expect(whole.length).toBeGreaterThan(0);
    const cut = `${header}\n${whole.join('\n')}\n${whole[0]!.slice(0, -1)}`;
    const parsed = await parse(cut, 'report-csv', 'TRANSACTION');
    expect(parsed.filter((r) => r.ok)).toHaveLength(whole.length);
    expect(rejections(parsed)).toEqual([
      {
        line: whole.length + 2,
        reason:
          "Payment Region 'O' is not one of the provider's values (AB, BC, MB, NB, NL, NS, NT, NU, ON, PE, QC, SK, YT)",
      },
    ]);
  });

  it('legacy returns: a country cut to one letter rejects the last row', async () => {
    const [first, second] = lines('legacy/type1-returns.csv');
    const parsed = await parse(`${first}\n${second!.slice(0, -1)}`, 'legacy', '1');
    expect(rejections(parsed)).toEqual([
      { line: 2, reason: "field 12 (country code) 'C' is not a two-letter ISO 3166 country code" },
    ]);
  });

  it('legacy transactions (default fields): a bank account cut before its last four digits rejects the row', async () => {
    const [first, second] = lines('legacy/type5-default.csv');
    const parsed = await parse(`${first}\n${second!.slice(0, -2)}`, 'legacy', '5');
    expect(rejections(parsed)).toEqual([
      {
        line: 2,
        reason:
          "field 17 (bank account) is not of the form xxx-xxxxx-…1234 (ending in the account's last 4 digits)",
      },
    ]);
  });
});

describe("the provider's limits on report rows", () => {
  const base = {
    transactionId: 'T1',
    transactionType: 'DEBIT',
    transactionStatus: 'SUCCESSFUL',
    transactionAmount: 100,
    currencyCode: 'CAD',
    transactionDateTime: '2026-03-08T07:30:00.123456Z',
  };
  const cases: [Record<string, unknown>, string][] = [
    [
      { merchantTransactionId: 'M'.repeat(3000) },
      "merchantTransactionId is 3000 characters long; the provider's limit is 1-30",
    ],
    [
      { merchantTransactionId: 'M'.repeat(31) },
      "merchantTransactionId is 31 characters long; the provider's limit is 1-30",
    ],
    [{ merchantId: '1'.repeat(17) }, "merchantId is 17 characters long; the provider's limit is 1-16"],
    [{ merchantUserId: 'ab' }, "merchantUserId is 2 characters long; the provider's limit is 3-64"],
    [{ countryCode: 'C' }, "countryCode 'C' is not a two-letter ISO 3166 country code"],
    [{ countryCode: 'ca' }, "countryCode 'ca' is not a two-letter ISO 3166 country code"],
    [
      { transactionRegion: 'XX' },
      "transactionRegion 'XX' is not one of the provider's values (AB, BC, MB, NB, NL, NS, NT, NU, ON, PE, QC, SK, YT)",
    ],
    [
      { transactionNotifyStatus: 'X' },
      "transactionNotifyStatus 'X' is not one of the provider's values (C, S, I)",
    ],
    [
      { transactionType: 'VERIFY' },
      "transactionType 'VERIFY' is not one of the provider's values (DEBIT, CREDIT)",
    ],
    [
      { transactionStatus: 'SUCC' },
      "transactionStatus 'SUCC' is not one of the provider's values (SUCCESSFUL, PENDING, REJECTED)",
    ],
  ];

  it('JSON report: each row outside a limit is rejected with its line and reason', async () => {
    const elements = [
      ...cases.map(([over]) => ({ ...base, ...over })),
      { ...base, merchantTransactionId: 'M'.repeat(30) },
    ];
    const parsed = await parse(`[${elements.map((e) => JSON.stringify(e)).join(',\n')}]`, 'report-json');
    expect(rejections(parsed)).toEqual(cases.map(([, reason], i) => ({ line: i + 1, reason })));
    expect(parsed.at(-1)?.ok).toBe(true);
  });

  it('legacy: a merchant transaction id over 30 characters is rejected as before', async () => {
    const [first] = lines('legacy/type5-default.csv');
    const long = first!.replace('ORD-100001', 'O'.repeat(31));
    const parsed = await parse(`${long}\n${first}\n`, 'legacy', '5');
    expect(rejections(parsed)).toEqual([
      { line: 1, reason: 'field 3 (merchant transaction ID) is 31 characters long; the limit is 30' },
    ]);
  });
});

describe('values whose form the provider does not show are kept raw', () => {
  it('legacy transaction type and notification status of any value', async () => {
    const [first] = lines('legacy/type5-default.csv');
    const fields = first!.split(',');
    fields[1] = 'Z';
    fields[11] = 'Q';
    const [record] = records(
      await parse(`${fields.join(',')}\n`, 'legacy', '5'),
    ) as LegacyTransactionRecord[];
    expect([record!.raw_transaction_type, record!.raw_notify_status]).toEqual(['Z', 'Q']);
  });
});
