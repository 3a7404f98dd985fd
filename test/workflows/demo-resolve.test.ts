import { describe, expect, it } from 'vitest';
import { reconDemo } from '../support/recon-process.ts';

/**
 * `recon demo` explains and resolves what does not match (issue 29, Proof; sandbox/demo-resolve.ts):
 * the candidates of a payin booked under a mistyped id, a 1:1 match from the first candidate, a 1:N
 * match of a split booking, each with its note, and a tolerance whose write-off limit writes off the
 * fees one cent off the contract, with the month's write-off report. The whole demo in a child process.
 */

describe('recon demo', () => {
  it('prints candidates, makes a 1:1 and a 1:N manual match, and writes off the one-cent fees', async () => {
    const run = await reconDemo(
      ['--from', '2026-04-01', '--to', '2026-05-31', '--transactions', '800', '--fresh'],
      270_000,
    );
    expect(run.code, run.stderr).toBe(0);
    const out = run.stdout;
    // The ground truth is scored before anything is resolved, after the nightly run has followed the
    // transactions still pending to their end: every planted discrepancy, and nothing else, in each
    // account (docs/getting-started.md), the status answers seeing the provider as its reports do.
    for (const account of ['ca-main \\(CAD\\)', 'us-main \\(USD\\)']) {
      expect(out).toMatch(
        new RegExp(
          `${account}: found (\\d+) of \\1 planted discrepancies \\(precision 100\\.0%, recall 100\\.0%\\)`,
        ),
      );
    }
    expect(out).toMatch(/explain and resolve \(ca-main, CAD; docs\/finance\.md\)/);
    // The mistyped id: its entry is the first candidate, every check passed, the id a character apart.
    const typo =
      /missing_in_ledger (T\w+) \(CAD [\d,.]+ on 2026-0[45]-\d\d\) has \d+ near-miss candidate\(s\):\n {4}1\. ledger entry (MT-[\w-]+) \(CAD [\d,.]+ on [\d-]+\), score \d+\n((?: {7}.*\n){4})/.exec(
        out,
      );
    expect(typo, out).not.toBeNull();
    expect(typo![3]).toMatch(/amount passed: the same amount/);
    expect(typo![3]).toMatch(/merchant_user passed: the same merchant user/);
    expect(typo![3]).toMatch(/id passed: merchant transaction ids [12] characters? apart/);
    expect(out).toContain(`(1:1, from candidate 1): ${typo![1]} with ${typo![2]} (CAD`);
    expect(out).toMatch(
      /by demo, note "booked under a mistyped merchant transaction id": 2 discrepancies resolved/,
    );
    // The split booking: one payin, two entries, one match.
    expect(out).toMatch(
      /manual match \d+ \(1:N, a split booking\): T\w+ with (MT-[\w-]+)-1 \+ \1-2 \(CAD [\d,.]+\), by demo, note "one payin booked as two entries": 3 discrepancies resolved/,
    );
    // The tolerance and its write-offs: the one-cent fee differences, in the month's report.
    expect(out).toMatch(
      /tolerance of ca-main CAD, version 1: amounts exact, no date lag, a difference of up to 1 cent written off/,
    );
    const off =
      /reconcile of ca-main 2026-04-01\.\.2026-05-31 with it: (\d+) discrepancies written off \(written off now: (.*)\)/.exec(
        out,
      );
    expect(Number(off?.[1])).toBeGreaterThan(0);
    expect(off![2]).toMatch(/fee_mismatch \d+/);
    expect(out).toMatch(
      /write-offs of \d{4}-\d\d \(Eastern, by when written off\), account ca-main\n {2}CAD [\d.]+ net in \d+ write-off\(s\)/,
    );
    expect(out).toMatch(
      /fee_mismatch of 1 cent\(s\) CAD, within the write-off limit of 1 cent\(s\) \(tolerances version 1\)/,
    );
  }, 300_000);
});
