import { Readable } from 'node:stream';
import type { DatabaseHandle } from '../../db/connect.ts';
import type { LoadSummary } from '../../domain/load-summary.ts';
import { addDays } from '../../domain/time/calendar.ts';
import { easternDayStartUtc } from '../../domain/time/eastern.ts';
import { loadReport } from '../../ingest/load/load-report.ts';

/**
 * Loads legacy transactions (query type 5) with `rowsPerDay[day]` rows on each listed Eastern day, as
 * one pull of the window `from`..`to` would: a committed load whose window covers every day of it,
 * days without rows included. Transaction ids are `<prefix><yyyymmdd><n>`, so that a second load of
 * the same day with another prefix adds rows instead of restating them.
 */
export async function loadDailyLegacyRows(
  h: DatabaseHandle,
  window: { from: string; to: string; account?: string },
  rowsPerDay: Readonly<Record<string, number>>,
  prefix = 'ET',
): Promise<LoadSummary> {
  const lines: string[] = [];
  for (const [day, count] of Object.entries(rowsPerDay)) {
    const ymd = day.replaceAll('-', '');
    for (let n = 1; n <= count; n++) {
      const id = `${prefix}${ymd}${String(n).padStart(4, '0')}`;
      lines.push(
        `${ymd},D,ORD-${id},${id},0000012550,CAD,S,IU1,0000000125,MERCH001,,C,player-${n},101500,CA,,`,
      );
    }
  }
  return loadReport(
    h,
    {
      ...(window.account ? { account: window.account } : {}),
      source: 'legacy-transactions',
      format: 'legacy',
      queryType: '5',
      fileName: `legacy5-${window.from}-${window.to}-${prefix}.csv`,
      origin: 'pull',
      environment: 'staging',
      window: { start: easternDayStartUtc(window.from), end: easternDayStartUtc(addDays(window.to, 1)) },
    },
    Readable.from([Buffer.from(lines.length ? `${lines.join('\n')}\n` : '')]),
  );
}
