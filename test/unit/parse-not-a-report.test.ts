import { describe, expect, it } from 'vitest';
import { NotAReport } from '../../domain/errors.ts';
import { quotedStart, redactSecrets } from '../../domain/redact-secrets.ts';
import { parseReport } from '../../provider/formats/index.ts';
import { LEGACY_ERROR_PAGES } from '../../sandbox/server/faults.ts';
import { collect, fixture, streamOf } from '../support/parse-helpers.ts';

/**
 * Issue 25 section 4: a non-empty answer of which no line is a record is no report at all. Before,
 * `recon parse --format legacy --query-type 5` on `Error: invalid merchant_pass` said "1 line(s)
 * rejected" and exited 0, and the pipeline committed such an answer as a quiet day.
 */
const parse = (text: string | Buffer, format: 'legacy' | 'report-csv' | 'report-json', queryType?: string) =>
  collect(parseReport(streamOf(text, 5), { format, queryType, fileName: 'answer' }));

async function notAReport(
  text: string | Buffer,
  format: 'legacy' | 'report-csv' | 'report-json',
  q?: string,
) {
  const error = await parse(text, format, q).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(NotAReport);
  return error as NotAReport;
}

describe('an answer of which no line is a record', () => {
  it('the legacy error line is not a report, naming the line and quoting the start', async () => {
    const error = await notAReport('Error: invalid merchant_pass\n', 'legacy', '5');
    expect(error.message).toBe(
      'answer: not a report: 1 line, none of them a record (line 1: expected 17 fields (query type 5, fields 1-17), found 1); it starts: "Error: invalid merchant_pass"',
    );
    expect(error.lines).toBe(1);
  });

  it('an HTML login page is not a report, for every query type; its form values are not quoted', async () => {
    const page = LEGACY_ERROR_PAGES['login-expired'].body;
    for (const q of ['1', '4', '5', '6']) {
      const error = await notAReport(page, 'legacy', q);
      expect(error.start).toMatch(/^<!DOCTYPE html> <html> <head><title>Login expired<\/title><\/head>/);
      expect(error.message).not.toContain('a1b2c3d4e5f6');
    }
  });

  it('every line with one column too many is not a report', async () => {
    const lines = fixture('legacy/type5-default.csv')
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => `${l},X\n`)
      .join('');
    const error = await notAReport(lines, 'legacy', '5');
    expect(error.lines).toBe(8);
    expect(error.first).toEqual({
      line: 1,
      reason: 'expected 17 fields (query type 5, fields 1-17), found 18',
    });
    // The quoted start is a data line: its e-mail and account are redacted.
    expect(error.start).not.toContain('@example.com');
  });

  it('a CSV report whose every row is of another width, or a JSON report of no valid element, is not a report', async () => {
    const csv = fixture('report/transactions.csv')
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l, i) => (i === 0 ? `${l}\n` : `${l},X\n`))
      .join('');
    expect((await notAReport(csv, 'report-csv', 'TRANSACTION')).first.line).toBe(2);
    await notAReport('[{"errorCode":"E1","errorMessage":"session expired"}]', 'report-json');
  });

  it('an empty answer, blank lines, a CSV header alone and [] are valid empty reports', async () => {
    expect(await parse('', 'legacy', '5')).toEqual([]);
    expect(await parse('\n  \n', 'legacy', '1')).toEqual([]);
    const header = fixture('report/transactions.csv').toString('utf8').split('\n')[0]!;
    expect(await parse(`${header}\n`, 'report-csv', 'TRANSACTION')).toEqual([]);
    expect(await parse('[]', 'report-json')).toEqual([]);
  });

  it('one record among rejected lines is a report with rejected rows', async () => {
    const good = fixture('legacy/type1-returns.csv').toString('utf8').split('\n')[0]!;
    const rows = await parse(`Error: something\n${good}\n`, 'legacy', '1');
    expect(rows.map((r) => r.ok)).toEqual([false, true]);
  });
});

describe('redactSecrets and quotedStart', () => {
  it('replaces named secret values, form values, credentials, tokens and the known secrets', () => {
    expect(redactSecrets('Error: invalid merchant_pass')).toBe('Error: invalid merchant_pass');
    expect(redactSecrets('merchant_id=M1&merchant_pass=hunter22&query_type=5')).toBe(
      'merchant_id=M1&merchant_pass=[secret]&query_type=5',
    );
    expect(redactSecrets('{"access_token": "abc.def", "token_type": "Bearer"}')).toBe(
      '{"access_token": "[secret]", "token_type": "Bearer"}',
    );
    expect(redactSecrets('<input type="hidden" name="csrf" value="q9w8e7">')).toBe(
      '<input type="hidden" name="csrf" value="[secret]">',
    );
    expect(redactSecrets('Authorization: Bearer eyJhbGciOi.eyJzdWIi.sig')).toBe(
      'Authorization: Bearer [secret]',
    );
    expect(redactSecrets('your password s3cr3t-pass is wrong', ['s3cr3t-pass'])).toBe(
      'your password [secret] is wrong',
    );
  });

  it('quotes at most 160 characters on one line, redacted before it is cut', () => {
    const secret = 'x'.repeat(150) + 'TOPSECRET123';
    const start = quotedStart(`a\n\n  b ${secret}`, [secret]);
    expect(start).toBe('a b [secret]');
    expect(quotedStart('y'.repeat(400))).toBe(`${'y'.repeat(160)}…`);
  });
});
