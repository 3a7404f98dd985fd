import { describe, expect, it } from 'vitest';
import { renderProgress } from '../../../workers/client/progress-bar.ts';
import type { BackfillProgress } from '../../../workflows/types.ts';

const base: BackfillProgress = {
  from: '2026-01-01',
  to: '2026-07-31',
  windowsTotal: 6,
  windowsDone: 0,
  windowsFailed: 0,
  windowsLeft: 6,
  rowsRead: 0,
  rowsLoaded: 0,
  rowsRejected: 0,
  failures: [],
  running: [],
  startedAt: '2026-11-21T10:00:00.000Z',
  runs: 1,
  finished: false,
};
const at = (s: number) => Date.parse('2026-11-21T10:00:00.000Z') + s * 1000;

describe('renderProgress', () => {
  it('estimates nothing before a window has finished', () => {
    expect(renderProgress({ ...base, running: [{ from: '2026-01-01', to: '2026-02-09' }] }, at(5), 12)).toBe(
      '[------------] 0/6 windows (1 running) | 0 rows (0/s) | 5s elapsed, estimating',
    );
  });

  it('estimates the time left from the pace so far and shows failures', () => {
    expect(
      renderProgress(
        { ...base, windowsDone: 2, windowsFailed: 1, windowsLeft: 3, rowsLoaded: 123456 },
        at(90),
        12,
      ),
    ).toBe('[######------] 3/6 windows | 123,456 rows (1,372/s) | 1 failed | 1m30s elapsed, ~1m30s left');
  });

  it('says done at the end', () => {
    expect(
      renderProgress(
        { ...base, windowsDone: 6, windowsLeft: 0, rowsLoaded: 6000, finished: true },
        at(3600 * 2 + 60),
        12,
      ),
    ).toBe('[############] 6/6 windows | 6,000 rows (1/s) | 2h01m elapsed, done');
  });

  it('says the final reconcile runs once every window is loaded, before the backfill has finished', () => {
    expect(
      renderProgress({ ...base, windowsDone: 6, windowsLeft: 0, rowsLoaded: 6000 }, at(3600 * 2 + 60), 12),
    ).toBe('[############] 6/6 windows | 6,000 rows (1/s) | 2h01m elapsed, final reconcile of the windows');
  });
});

describe('renderProgress with rows in flight', () => {
  it('shows the rows the running windows are reading', () => {
    expect(
      renderProgress(
        {
          ...base,
          windowsDone: 1,
          windowsLeft: 5,
          rowsLoaded: 1000,
          running: [{ from: '2026-02-10', to: '2026-03-21' }],
        },
        at(10),
        12,
        2345,
      ),
    ).toBe(
      '[##----------] 1/6 windows (1 running) | 1,000 rows (100/s) +2,345 reading | 10s elapsed, ~50s left',
    );
  });
});
