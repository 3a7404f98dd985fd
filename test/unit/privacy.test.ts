import { describe, expect, it } from 'vitest';
import { UnreadableInput } from '../../domain/errors.ts';
import {
  describeHeader,
  describeJsonError,
  PERSONAL_MARK as M,
  redactPersonal,
} from '../../domain/privacy.ts';

describe('redactPersonal', () => {
  it('replaces e-mails, bank accounts (masked or not), masked labels and personal JSON members', () => {
    expect(
      redactPersonal(
        '20260115,D,ORD-1,ET1,0000012550,CAD,S,IU1,0000000125,MERCH001,,C,player-7731,093000,CA,jane.doe@example.com,001-00011-****4821',
      ),
    ).toBe(
      `20260115,D,ORD-1,ET1,0000012550,CAD,S,IU1,0000000125,MERCH001,,C,player-7731,093000,CA,${M},${M}`,
    );
    expect(redactPersonal('XXX-XXXXX-XXXXXXX1234 and 003-00456-1234567 and ****0099')).toBe(
      `${M} and ${M} and ${M}`,
    );
    expect(
      redactPersonal(
        '{"accountInfo":{"accountToken":"AT00ff","account_label":"****1234","fiName":"Maple Bank"},"consumer":{"name":{"firstName":"Jane","LastName":"Doe \\"Q\\""}},"transactionId":"T1"}',
      ),
    ).toBe(
      `{"accountInfo":{"accountToken":"${M}","account_label":"${M}","fiName":"Maple Bank"},"consumer":{"name":{"firstName":"${M}","LastName":"${M}"}},"transactionId":"T1"}`,
    );
  });

  it('keeps business values, and is idempotent', () => {
    const business =
      'ORD-300001,IBT2603080000001,2026-03-08T06:59:59.999999Z,12550,CAD,EXT-55001,player-7731,PU-88120';
    expect(redactPersonal(business)).toBe(business);
    const once = redactPersonal('a@b.example {"email": "c@d.example"} 001-00011-****4821');
    expect(redactPersonal(once)).toBe(once);
  });

  it('also redacts values cut short at the end of a quoted snippet', () => {
    expect(redactPersonal('found \'{"accountToken":"AT12')).toBe(`found '{"accountToken":"${M}"`);
    expect(redactPersonal("found 'x jane.doe@exa")).toBe(`found 'x ${M}`);
    expect(redactPersonal(`found '{"errorCode":"V026",'`)).toBe(`found '{"errorCode":"V026",'`);
  });

  it('is applied by UnreadableInput', () => {
    expect(new UnreadableInput('f.csv', 2, "field 1 (date) 'jane@example.com' is not YYYYMMDD").message).toBe(
      `f.csv:2: field 1 (date) '${M}' is not YYYYMMDD`,
    );
  });
});

describe('describeJsonError and describeHeader', () => {
  it('drop the input V8 quotes in a JSON.parse error, keeping the position', () => {
    const error = (text: string) => {
      try {
        JSON.parse(text);
      } catch (e) {
        return describeJsonError(e);
      }
      throw new Error('parsed');
    };
    expect(error('jane@example.com AT0011')).toBe("Unexpected token 'j' (not valid JSON)");
    expect(error('{"a": 1,}')).toMatch(/^Expected double-quoted property name in JSON at position 8/);
  });

  it('names the known columns of a refused header and only counts the others', () => {
    expect(
      describeHeader(['Transaction ID', 'jane@example.com', 'AT0011'], (c) => c === 'Transaction ID'),
    ).toBe('found 3 columns: Transaction ID and 2 others (not shown)');
  });
});
