import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_VOLUME_SETTINGS } from '../../config/volume.ts';
import { parseWebhooks } from '../../reconcile/alerts/webhooks.ts';
import { checkVolume } from '../../reconcile/volume/check-volume.ts';
import { isBusinessDay } from '../../domain/time/business-days.ts';
import { datesBetween } from '../../domain/time/calendar.ts';
import { useTestDatabase } from '../support/database.ts';
import { loadDailyLegacyRows } from '../support/daily-legacy-rows.ts';

/**
 * The low-volume check against real PostgreSQL, its alert posted to a real HTTP receiver on
 * 127.0.0.1: a business day on which legacy transactions held nothing, or far less than usual, is
 * flagged with the usual figure it was compared with, sent once, and cleared when its rows arrive.
 */
const h = useTestDatabase();
const bodies: Record<string, unknown>[] = [];
let receiver: Server;
let hook: string;

/** 12 rows on each business day of February, with one bulk day and one quiet day in the baseline. */
function february(): Record<string, number> {
  const rows: Record<string, number> = {};
  for (const day of datesBetween('2026-02-02', '2026-03-03')) if (isBusinessDay(day)) rows[day] = 12;
  rows['2026-02-10'] = 100;
  rows['2026-02-12'] = 1;
  return rows;
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hook = `json:http://127.0.0.1:${(receiver.address() as AddressInfo).port}/volume`;
  // One pull of 2026-02-02..2026-03-06: nothing on Wednesday 03-04, 2 rows on 03-05, 11 on 03-06.
  await loadDailyLegacyRows(
    h,
    { from: '2026-02-02', to: '2026-03-06' },
    { ...february(), '2026-03-05': 2, '2026-03-06': 11 },
  );
});
afterAll(async () => {
  await new Promise((resolve) => receiver.close(resolve));
});

const check = (from: string, to: string, account = 'default') =>
  checkVolume(
    h.db,
    { account, from, to },
    { settings: DEFAULT_VOLUME_SETTINGS, alerts: { webhooks: parseWebhooks(hook) } },
  );

describe('low-volume days', () => {
  it('flags a loaded business day with no rows and one with far fewer than the median, and alerts once with the figures', async () => {
    // 03-09 (Monday) was never loaded: unknown, not judged.
    const result = await check('2026-03-02', '2026-03-09');
    expect(result).toMatchObject({ account: 'default', judged: 5, flagged: 2, alerted: 2 });
    expect(result.flags).toEqual([
      { source: 'legacy-transactions', day: '2026-03-04', rows: 0, usualRows: 12, baselineDays: 20 },
      { source: 'legacy-transactions', day: '2026-03-05', rows: 2, usualRows: 12, baselineDays: 20 },
    ]);
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toMatchObject({
      type: 'low_volume',
      account: 'default',
      from: '2026-03-02',
      to: '2026-03-09',
      low_percent: 25,
      days: [
        { date: '2026-03-04', source: 'legacy-transactions', rows: 0, usual_rows: 12, baseline_days: 20 },
        { date: '2026-03-05', source: 'legacy-transactions', rows: 2, usual_rows: 12, baseline_days: 20 },
      ],
    });
    expect(String(bodies[0]!.text)).toContain('account default');

    // The next night's look-back sees the same days: nothing is sent again.
    const again = await check('2026-03-03', '2026-03-06');
    expect(again).toMatchObject({ flagged: 2, alerted: 0 });
    expect(bodies).toHaveLength(1);
    const kinds = await sql<{ kind: string }>`select kind from alert_deliveries`.execute(h.db);
    expect(kinds.rows).toEqual([{ kind: 'volume' }]);
  });

  it('clears a flag when the rows of the day arrive late, keeping what it was compared with', async () => {
    await loadDailyLegacyRows(h, { from: '2026-03-04', to: '2026-03-04' }, { '2026-03-04': 12 }, 'LT');
    const result = await check('2026-03-02', '2026-03-06');
    expect(result).toMatchObject({ flagged: 1, alerted: 0 });
    expect(result.flags.map((f) => f.day)).toEqual(['2026-03-05']);
    const cleared = await h.db
      .selectFrom('volume_flags')
      .select(['rows_loaded', 'usual_rows', 'cleared_at'])
      .where('business_date', '=', '2026-03-04')
      .executeTakeFirstOrThrow();
    expect(cleared).toMatchObject({ rows_loaded: 12, usual_rows: 12 });
    expect(cleared.cleared_at).not.toBeNull();
    expect(bodies).toHaveLength(1);
  });

  it('does not judge a day whose only load started before the day ended, nor another account', async () => {
    // us-main: the same history, then nothing on 03-06, pulled at 12:00 Eastern that day.
    await loadDailyLegacyRows(
      h,
      { from: '2026-02-02', to: '2026-03-06', account: 'us-main' },
      { ...february(), '2026-03-04': 12, '2026-03-05': 12 },
    );
    await sql`update loads set started_at = '2026-03-06T17:00:00Z' where account = 'us-main'`.execute(h.db);
    const result = await check('2026-03-02', '2026-03-06', 'us-main');
    expect(result).toMatchObject({ account: 'us-main', judged: 4, flagged: 0, alerted: 0 });
    expect(bodies).toHaveLength(1);
  });

  it('leaves a source without usual volume unjudged as low (RECON_VOLUME_MIN_USUAL_ROWS)', async () => {
    const result = await checkVolume(
      h.db,
      { account: 'default', from: '2026-03-05', to: '2026-03-05' },
      { settings: { ...DEFAULT_VOLUME_SETTINGS, minUsualRows: 13 } },
    );
    expect(result).toMatchObject({ judged: 1, flagged: 0 });
  });
});
