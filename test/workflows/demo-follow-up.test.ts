import { describe, expect, it } from 'vitest';
import { reconDemo } from '../support/recon-process.ts';

/**
 * `recon demo` shows transactions followed to their end (issue 25, Proof): its backfill sees the
 * sandbox provider as of the end of the last day, when some transactions are still PENDING; the
 * nightly run after it sees them settled, and its follow-up asks the status of those older than its
 * windows. The whole demo in a child process: its own embedded warehouse, a Temporal dev server.
 */

describe('recon demo', () => {
  it('prints what the nightly follow-up asked and settled, and transactions followed to their end', async () => {
    const run = await reconDemo(
      ['--from', '2026-04-01', '--to', '2026-05-31', '--transactions', '800', '--fresh'],
      240_000,
    );
    expect(run.code, run.stderr).toBe(0);
    const pending = /after the backfill, (\d+) provider transaction\(s\) are still PENDING/.exec(run.stderr);
    expect(Number(pending?.[1])).toBeGreaterThan(0);
    const followUp = [
      ...run.stderr.matchAll(
        /nightly follow-up of (ca-main|us-main): (\d+) transaction\(s\) not final older than the night's windows, (\d+) asked, (\d+) settled/g,
      ),
    ];
    expect(followUp.map((m) => m[1]).sort()).toEqual(['ca-main', 'us-main']);
    expect(followUp.reduce((n, m) => n + Number(m[4]), 0)).toBeGreaterThan(0);
    expect(run.stderr).toMatch(
      /followed to its end: T\w+ of 2026-0[45]-\d\d, PENDING when loaded, now (SUCCESSFUL|REJECTED|FAILED)/,
    );
    // Followed to their end, the settled transactions leave the planted discrepancies as they were.
    expect(run.stdout).toMatch(/ca-main \(CAD\): found \d+ of \d+ planted discrepancies/);
  }, 300_000);
});
