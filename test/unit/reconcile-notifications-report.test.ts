import { describe, expect, it } from 'vitest';
import { authorised, parseAllowList } from '../../ingest/notifications/server.ts';
import {
  canonicalJson,
  deliveryKey,
  normaliseNotification,
} from '../../ingest/notifications/normalise-notification.ts';
import { formatCents } from '../../reconcile/report/format-money.ts';
import { renderHtmlReport } from '../../reconcile/report/render-html.ts';
import { dateRuns, type ReportData } from '../../reconcile/report/report-data.ts';
import { formatCoverage } from '../../reconcile/report/format-summary.ts';
import { discrepanciesCsv } from '../../reconcile/report/write-csv.ts';

const body = {
  merchant: { merchantId: 'M1', merchantTransactionId: 'MT-1', merchantUserId: 'abc' },
  accountInfo: { accountToken: 'tok', accountLabel: '****1234', accountType: 'PS' },
  transaction: {
    transactionId: 'T1',
    transactionType: 'CREDIT',
    transactionStatus: 'FAILED',
    transactionAmount: 50,
    transactionFee: 0,
    currencyCode: 'CAD',
  },
};

describe('notification normalisation', () => {
  it('keeps raw values and reads the amount as cents', () => {
    const r = normaliseNotification('transaction', body);
    expect(r.ok && r.value).toMatchObject({
      transaction_id: 'T1',
      transaction_type: 'CREDIT',
      status: 'FAILED',
      raw_status: 'FAILED',
      amount_cents: 50, // below 100 is allowed for a failed transaction (section 8: it is rejected)
      raw_amount: '50',
      account_token: 'tok',
    });
  });

  it('refuses what breaks the stated limits, naming the field', () => {
    const cases: [unknown, string][] = [
      [[], 'the body must be a JSON object'],
      [{ merchant: {} }, 'transaction must be an object: a notification without it cannot be matched'],
      [
        { ...body, transaction: { ...body.transaction, transactionStatus: 'SUCCESS' } },
        'transaction.transactionAmount 50 is outside 100-100000000 for a successful transaction',
      ],
      [
        { ...body, accountInfo: { accountLabel: '1234' } },
        'accountInfo.accountLabel is 4 characters; the minimum is 8',
      ],
      [
        { ...body, merchant: { merchantUserId: 'ab' } },
        'merchant.merchantUserId is 2 characters; the minimum is 3',
      ],
      [{ ...body, merchant: { merchantSubId: 1_000_001 } }, 'merchant.merchantSubId must be 0-1000000'],
      [
        { ...body, transaction: { ...body.transaction, transactionAmount: 10.5 } },
        'transaction.transactionAmount must be a JSON integer, got 10.5',
      ],
      [
        { ...body, transaction: { ...body.transaction, currencyCode: 'cad' } },
        'transaction.currencyCode must be 3 uppercase letters (ISO 4217), got "cad"',
      ],
      [
        { ...body, transaction: { ...body.transaction, dataPassThrough: 'x'.repeat(129) } },
        'transaction.dataPassThrough is 129 characters; the maximum is 128',
      ],
    ];
    for (const [input, reason] of cases)
      expect(normaliseNotification('transaction', input)).toEqual({ ok: false, reason });
  });

  it('gives the same delivery key whatever the key order, and another per kind', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
    expect(deliveryKey('transaction', { a: 1, b: 2 })).toBe(deliveryKey('transaction', { b: 2, a: 1 }));
    expect(deliveryKey('transaction', { a: 1 })).not.toBe(deliveryKey('return', { a: 1 }));
  });
});

describe('receiver checks', () => {
  it('accepts the secret as bearer token or basic-auth password only', () => {
    expect(authorised('Bearer s3cret', 's3cret')).toBe(true);
    expect(authorised(`Basic ${Buffer.from('any:s3cret').toString('base64')}`, 's3cret')).toBe(true);
    expect(authorised(`Basic ${Buffer.from('s3cret:x').toString('base64')}`, 's3cret')).toBe(false);
    expect(authorised('Bearer s3cre', 's3cret')).toBe(false);
    expect(authorised(undefined, 's3cret')).toBe(false);
  });

  it('parses CIDR allow-lists and refuses junk', () => {
    const list = parseAllowList(['10.0.0.0/8', ' ::1 '])!;
    expect(list.check('10.1.2.3', 'ipv4')).toBe(true);
    expect(list.check('11.0.0.1', 'ipv4')).toBe(false);
    expect(list.check('::1', 'ipv6')).toBe(true);
    expect(parseAllowList([''])).toBeNull();
    expect(() => parseAllowList(['10.0.0.0/33'])).toThrow(
      'RECON_NOTIFICATION_ALLOW entry "10.0.0.0/33" is not an IP address or CIDR',
    );
  });
});

describe('report output', () => {
  const data: ReportData = {
    from: '2026-03-01',
    to: '2026-03-02',
    coverage: { days: 2, checkedDays: 2, unchecked: [], lastRunAt: '2026-03-03 10:00:00+00' },
    totals: [{ currency: 'CAD', count: 1, amount_cents: 5 }],
    byAccount: [{ account: 'default', currency: 'CAD', count: 1, amount_cents: 5 }],
    volumes: [{ day: '2026-03-01', type: 'DEBIT', currency: 'CAD', count: 2, amount_cents: 123456 }],
    byKind: [{ kind: 'amount_mismatch', currency: 'CAD', count: 1, amount_cents: 5 }],
    byDay: [{ day: '2026-03-02', kind: 'amount_mismatch', currency: 'CAD', count: 1, amount_cents: 5 }],
    returnsByCode: [{ code: '901', currency: 'CAD', count: 1, amount_cents: 1000 }],
    discrepancies: [
      {
        discrepancy_id: 7,
        account: 'default',
        kind: 'amount_mismatch',
        rule: 'transaction_vs_ledger',
        status: 'open',
        business_date: '2026-03-02',
        transaction_id: 'T<1>',
        merchant_transaction_id: '=HYPERLINK("x")',
        return_transaction_id: null,
        currency: 'CAD',
        expected_amount_cents: 1000,
        actual_amount_cents: 1005,
        difference_cents: 5,
        expected: { amount_cents: 1000 },
        actual: { amount_cents: 1005 },
        first_seen_at: '2026-03-03 10:00:00+00',
        last_seen_at: '2026-03-03 10:00:00+00',
        resolved_at: null,
        resolution: null,
        acknowledged_at: null,
        acknowledged_by: null,
        note: 'checked, "ok"',
        stake_cents: 5,
        assignee: null,
      },
    ],
    unknownTypeCodes: [],
    largestOpen: [],
    oldestOpen: [],
  };

  it('names unchecked dates as runs of consecutive dates, across month ends', () => {
    expect(
      dateRuns(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-03', '2026-12-31', '2027-01-01']),
    ).toEqual([
      { from: '2026-02-27', to: '2026-03-01' },
      { from: '2026-03-03', to: '2026-03-03' },
      { from: '2026-12-31', to: '2027-01-01' },
    ]);
    expect(dateRuns([])).toEqual([]);
    expect(
      formatCoverage({
        from: '2026-02-27',
        to: '2026-03-03',
        coverage: {
          days: 5,
          checkedDays: 1,
          unchecked: dateRuns(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-03']),
          lastRunAt: null,
        },
      }),
    ).toBe(
      'coverage: INCOMPLETE: 4 of 5 dates were never checked by a reconcile run: 2026-02-27..2026-03-01, 2026-03-03\n' +
        '  Discrepancies on those dates are unknown, not zero: run recon reconcile over them first.\n',
    );
  });

  it('formats cents without floating point', () => {
    expect([formatCents(123456789), formatCents(-5), formatCents(0), formatCents(null)]).toEqual([
      '1,234,567.89',
      '-0.05',
      '0.00',
      '',
    ]);
  });

  it('writes a self-contained HTML page with SVG charts and escaped values', () => {
    const html = renderHtmlReport(data, { generatedAt: '2026-03-03T00:00:00Z' });
    expect(html.match(/<svg /g)).toHaveLength(3);
    expect(html).toContain('T&#60;1&#62;');
    expect(html).not.toMatch(/<(script|link|img)\b/);
    expect(html).not.toMatch(/(src|href)="https?:/);
    expect(html).toContain('1,234.56');
  });

  it('exports CSV with quoting and no spreadsheet formulas', () => {
    const csv = discrepanciesCsv(data.discrepancies).split('\r\n');
    expect(csv[1]).toBe(
      `7,amount_mismatch,transaction_vs_ledger,open,2026-03-02,CAD,10.00,10.05,0.05,0.05,T<1>,"'=HYPERLINK(""x"")",,,2026-03-03 10:00:00+00,,"checked, ""ok""",,,1000,1005,5,5,"{""amount_cents"":1000}","{""amount_cents"":1005}",default`,
    );
  });
});
