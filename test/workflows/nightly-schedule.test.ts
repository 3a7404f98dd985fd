import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { NIGHTLY_SCHEDULE_ID, upsertNightlySchedule } from '../../workers/client/schedule.ts';
import { easternDayStartUtc } from '../../domain/time/eastern.ts';
import type { nightlyWorkflow } from '../../workflows/nightly-workflow.ts';
import type { NightlyResult } from '../../workflows/types.ts';
import { addDays } from '../../domain/time/calendar.ts';
import { easternDateOfMs } from '../../domain/time/eastern.ts';
import { useSandboxCluster } from '../support/sandbox-cluster.ts';

/** The nightly schedule on a real server: idempotent create, trigger, schedule backfill, no double load. */
const today = easternDateOfMs(new Date().getTime());
const c = useSandboxCluster({
  name: 'nightly',
  sandbox: { seed: 'nightly', transactions: 300, from: addDays(today, -10), to: today },
  poolSize: 12,
});

async function nextRun(previousActions: number): Promise<NightlyResult> {
  const schedule = c.server.client.schedule.getHandle(NIGHTLY_SCHEDULE_ID);
  for (let i = 0; i < 300; i++) {
    const { info } = await schedule.describe();
    const action = info.recentActions[previousActions];
    if (action) {
      return c.server.client.workflow
        .getHandle<typeof nightlyWorkflow>(action.action.workflow.workflowId)
        .result();
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the schedule started no run within 30 s');
}

describe('nightly schedule', () => {
  it('is created once and updated when created again', async () => {
    const first = await upsertNightlySchedule(c.server.client, { taskQueue: c.taskQueue, at: '02:30' });
    const second = await upsertNightlySchedule(c.server.client, {
      taskQueue: c.taskQueue,
      at: '02:30',
      lookbackDays: 3,
    });
    expect([first.created, second.created]).toEqual([true, false]);
    const d = await second.handle.describe();
    expect(d.spec.timezone).toBe('America/Toronto');
    expect(d.spec.calendars?.[0]?.hour).toEqual([{ start: 2, end: 2, step: 1 }]);
    expect(d.spec.calendars?.[0]?.minute).toEqual([{ start: 30, end: 30, step: 1 }]);
    expect(d.policies).toMatchObject({ overlap: 'BUFFER_ONE', catchupWindow: 72 * 3_600_000 });
  });

  it('covers the scheduled day and its look-back, and a second trigger for the same day loads nothing twice', async () => {
    const schedule = c.server.client.schedule.getHandle(NIGHTLY_SCHEDULE_ID);
    await schedule.trigger();
    const first = await nextRun(0);
    // The day comes from the scheduled time (today, unless the test runs across Eastern midnight).
    expect(first.scheduledFor).not.toBeNull();
    const day = easternDateOfMs(new Date(first.scheduledFor as string).getTime());
    expect(first).toMatchObject({ from: addDays(day, -3), to: day });
    const range = { start: easternDayStartUtc(first.from), end: easternDayStartUtc(addDays(day, 1)) };
    const expected = [...c.sandbox.history.facts(range)].map((f) => f.transactionId).sort();
    expect(expected.length).toBeGreaterThan(0);
    const ids = async () =>
      (
        await sql<{ id: string }>`select transaction_id as id from provider_transactions order by 1`.execute(
          c.h.db,
        )
      ).rows.map((r) => r.id);
    expect(await ids()).toEqual(expected);
    const lastLoad = (
      await c.h.db
        .selectFrom('loads')
        .select((eb) => eb.fn.max('load_id').as('id'))
        .executeTakeFirstOrThrow()
    ).id;

    await schedule.trigger();
    const second = await nextRun(1);
    expect(second).toMatchObject({ from: first.from, to: first.to, rowsLoaded: first.rowsLoaded });
    expect(await ids()).toEqual(expected);
    const again = await sql<{ loads: number; inserted: number; updated: number }>`
      select count(*)::int as loads, sum(rows_inserted)::int as inserted, sum(rows_updated)::int as updated
      from loads where load_id > ${lastLoad} and status = 'committed'`.execute(c.h.db);
    expect(again.rows[0]).toEqual({ loads: 5, inserted: 0, updated: 0 });
  });

  it('a schedule backfill covers the day it stands for, not the day it runs', async () => {
    const schedule = c.server.client.schedule.getHandle(NIGHTLY_SCHEDULE_ID);
    // 02:30 Toronto on the fall-back day is 07:30 UTC (EST).
    await schedule.backfill({
      start: new Date('2026-11-01T07:29:00Z'),
      end: new Date('2026-11-01T07:31:00Z'),
      overlap: 'ALLOW_ALL',
    });
    const run = await nextRun(2);
    expect(run).toMatchObject({
      from: '2026-10-29',
      to: '2026-11-01',
      scheduledFor: '2026-11-01T07:30:00.000Z',
    });
  });
});
