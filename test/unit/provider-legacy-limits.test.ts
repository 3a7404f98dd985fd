import { describe, expect, it } from 'vitest';
import { LegacyQueryRefused } from '../../provider/client/errors.ts';
import { buildLegacyForm, type LegacyQueryRequest } from '../../provider/client/legacy-limits.ts';

const CREDS = { merchantId: 'EXF00001', merchantPass: 'p4ss-word' };

function refusal(req: LegacyQueryRequest, creds = CREDS): LegacyQueryRefused {
  try {
    buildLegacyForm(req, creds);
  } catch (error) {
    expect(error).toBeInstanceOf(LegacyQueryRefused);
    expect((error as LegacyQueryRefused).retryable).toBe(false);
    return error as LegacyQueryRefused;
  }
  throw new Error('expected a refusal');
}

describe('legacy query limits (spec 4.6 and 8), checked before sending', () => {
  it('builds the form of a valid query, 40 days inclusive being the limit', () => {
    const form = buildLegacyForm(
      {
        queryType: '5',
        from: '2026-01-01',
        to: '2026-02-09',
        merchantTransactionNumber: 'MT-1',
        fields: [1, 2, 4, 20],
      },
      CREDS,
    );
    expect(form.toString()).toBe(
      'merchant_id=EXF00001&merchant_pass=p4ss-word&query_type=5&query_sdate=20260101&query_edate=20260209&merchant_txn_num=MT-1&response_fields=1%2C2%2C4%2C20',
    );
    expect(
      buildLegacyForm({ queryType: '1', from: '2026-03-01', to: '2026-03-01' }, CREDS).get('response_fields'),
    ).toBeNull();
  });

  it('refuses each broken limit with a message naming it', () => {
    const cases: [LegacyQueryRequest, string][] = [
      [
        { queryType: '5', from: '2026-01-01', to: '2026-02-14' },
        'query_sdate..query_edate spans 45 days; the limit is 40',
      ],
      [
        { queryType: '5', from: '2026-01-01', to: '2026-02-10' },
        'query_sdate..query_edate spans 41 days; the limit is 40',
      ],
      [
        { queryType: '5', from: '2026-02-02', to: '2026-02-01' },
        'query_edate 2026-02-01 is before query_sdate 2026-02-02',
      ],
      [
        { queryType: '5', from: '2026-02-30', to: '2026-03-01' },
        'query_sdate "2026-02-30" is not a date YYYY-MM-DD',
      ],
      [
        { queryType: '2' as '5', from: '2026-03-01', to: '2026-03-01' },
        'query_type "2" is not one of the known types 1, 4, 5, 6',
      ],
      [
        { queryType: '5', from: '2026-03-01', to: '2026-03-01', merchantTransactionNumber: 'M'.repeat(31) },
        'merchant_txn_num has 31 characters; the limit is 30',
      ],
      [
        { queryType: '5', from: '2026-03-01', to: '2026-03-01', fields: [1, 2, 2, 4] },
        'response_fields lists field(s) 2 more than once',
      ],
      [
        { queryType: '5', from: '2026-03-01', to: '2026-03-01', fields: [1, 19] },
        'field 19 (return date) is not valid for query type 5',
      ],
      [
        { queryType: '6', from: '2026-03-01', to: '2026-03-01', fields: [0, 23, 4] },
        'response_fields holds unknown field number(s) 0, 23; fields are 1 to 22',
      ],
      [
        { queryType: '1', from: '2026-03-01', to: '2026-03-01', fields: [1] },
        'response_fields applies only to query types 5 and 6, not 1',
      ],
      [
        { queryType: '6', from: '2026-03-01', to: '2026-03-01', fields: [] },
        'response_fields is empty: omit it for the defaults',
      ],
    ];
    for (const [req, message] of cases) {
      expect(refusal(req).message).toBe(`legacy query refused before sending: ${message}`);
    }
    expect(refusal({ queryType: '5', from: '2026-03-01', to: '2026-03-01', fields: [19, 1] }).limit).toBe(
      'field 19 with type 5',
    );
    expect(() =>
      buildLegacyForm({ queryType: '6', from: '2026-03-01', to: '2026-03-01', fields: [19] }, CREDS),
    ).not.toThrow();
  });

  it('checks credential sizes without echoing them', () => {
    const longPass = refusal(
      { queryType: '4', from: '2026-03-01', to: '2026-03-01' },
      { merchantId: 'EXF00001', merchantPass: 'x'.repeat(21) },
    );
    expect(longPass.message).toBe(
      'legacy query refused before sending: merchant_pass has more than 20 characters (check RECON_LEGACY_MERCHANT_PASS)',
    );
    const longId = refusal(
      { queryType: '4', from: '2026-03-01', to: '2026-03-01' },
      { merchantId: 'EXF000012', merchantPass: 'p' },
    );
    expect(longId.message).toBe(
      'legacy query refused before sending: merchant_id has 9 characters; the limit is 8 (check RECON_LEGACY_MERCHANT_ID)',
    );
  });
});
