import { describe, expect, it } from 'vitest';
import { useSandboxCluster } from '../support/sandbox-cluster.ts';

/** `recon backfill` as a user runs it, against a cluster (TEMPORAL_ADDRESS set) and its worker. */
const c = useSandboxCluster({
  name: 'cli',
  sandbox: { seed: 'cli', transactions: 200, from: '2026-03-01', to: '2026-04-30' },
  timeoutMs: 60_000,
});

describe('recon backfill', () => {
  it('runs a backfill to the end, prints its result as JSON and exits 0', async () => {
    const { code, stdout, stderr } = await c.recon([
      'backfill',
      '--from',
      '2026-03-01',
      '--to',
      '2026-04-30',
    ]);
    expect(stderr).toContain(`started backfill-2026-03-01-2026-04-30 on ${c.server.address}`);
    expect(stderr).toMatch(/\[#{24}\] 2\/2 windows \| [\d,]+ rows/);
    expect(code).toBe(0);
    const result = JSON.parse(stdout) as Record<string, unknown>;
    expect(result).toMatchObject({
      from: '2026-03-01',
      to: '2026-04-30',
      windows: 2,
      rowsRejected: 0,
      runs: 1,
    });
    const loaded = await c.h.db
      .selectFrom('provider_transactions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(loaded.n)).toBe(200);
  });

  it('refuses a reversed range with exit code 2 before contacting anything', async () => {
    const { code, stdout, stderr } = await c.recon([
      'backfill',
      '--from',
      '2026-04-30',
      '--to',
      '2026-03-01',
    ]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      'recon: --from 2026-04-30 is after --to 2026-03-01: give --from on or before --to\nsee recon backfill --help\n',
    );
  });
});
