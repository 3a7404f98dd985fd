import { describe, expect, it } from 'vitest';
import { InvalidParseOption, parseReport } from '../../provider/formats/index.ts';
import type { ReportFormat } from '../../domain/records.ts';
import { streamOf } from '../support/parse-helpers.ts';

describe('parseReport options', () => {
  it('refuses an unknown format or a missing legacy query type at call time, reading nothing', () => {
    let read = false;
    const input = (async function* () {
      read = true;
      yield Buffer.from('x');
    })();
    expect(() => parseReport(input, { format: 'xml' as ReportFormat, fileName: 'a.xml' })).toThrow(
      new InvalidParseOption("unknown format 'xml'; use legacy, report-json or report-csv"),
    );
    expect(() => parseReport(input, { format: 'legacy', fileName: 'a.csv' })).toThrow(
      "legacy query type '' is not supported; use --query-type 1 (returns), 4 (adjustments), 5 or 6 (transactions)",
    );
    expect(read).toBe(false);
  });

  it('ignores the query type for report-json', async () => {
    const rows = [];
    for await (const row of parseReport(streamOf('[]'), {
      format: 'report-json',
      queryType: 'RETURN',
      fileName: 'a.json',
    })) {
      rows.push(row);
    }
    expect(rows).toEqual([]);
  });
});
