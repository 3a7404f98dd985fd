import { describe, expect, it } from 'vitest';
import { alertBody, alertKey } from '../../reconcile/alerts/payload.ts';
import type { LowVolumeAlert } from '../../reconcile/alerts/volume-payload.ts';

/** The low-volume alert's bodies and key (no I/O). */
const alert: LowVolumeAlert = {
  type: 'volume',
  account: 'ca-main',
  from: '2026-03-02',
  to: '2026-03-05',
  lowPercent: 25,
  days: [{ source: 'legacy-transactions', day: '2026-03-04', rows: 0, usualRows: 412, baselineDays: 20 }],
};

describe('the low-volume alert', () => {
  it('names the account, source, day, rows and usual figure, in Slack and JSON, with the calendar link', () => {
    const slack = alertBody('slack', alert, 'https://recon.example.com/') as {
      text: string;
      blocks: unknown[];
    };
    expect(slack.text).toBe(
      'Low volume, account ca-main: 2026-03-04 legacy-transactions: 0 rows, usually 412 (median of 20 business days) https://recon.example.com/coverage?from=2026-03-02&to=2026-03-05',
    );
    expect(JSON.stringify(slack.blocks)).toContain(
      '<https://recon.example.com/coverage?from=2026-03-02&to=2026-03-05|',
    );
    const json = alertBody('json', alert, undefined) as Record<string, unknown>;
    expect(json).toMatchObject({ type: 'low_volume', account: 'ca-main', link: null });
  });

  it('is keyed by the account and the flagged days, whatever run sends it', () => {
    expect(alertKey(alert)).toMatch(/^volume:ca-main:[0-9a-f]{32}$/);
    expect(alertKey({ ...alert, from: '2026-03-01' })).toBe(alertKey(alert));
    expect(alertKey({ ...alert, days: [{ ...alert.days[0]!, day: '2026-03-05' }] })).not.toBe(
      alertKey(alert),
    );
  });
});
