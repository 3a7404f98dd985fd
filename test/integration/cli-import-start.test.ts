import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packagesHook, packagesLoaded } from '../support/packages-hook.ts';
import { useTestDatabase } from '../support/database.ts';
import { recon, ROOT } from '../support/recon-process.ts';

// recon import of new rows writes them through node-postgres alone (ingest/load/load-statements.ts):
// Kysely, 255 modules and about 0.1 s of CPU, was the largest part of the process's start, which is a
// third of a 100,000-line import's distance to a bare \copy (docs/benchmark-record.md §3).

const handle = useTestDatabase();
const dir = mkdtempSync(join(tmpdir(), 'recon-cli-import-start-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FILE = join(ROOT, 'test/fixtures/legacy/type5-default.csv');

async function importFile(): Promise<{ summary: Record<string, unknown>; packages: string[] }> {
  const r = await recon(
    handle.connectionString,
    ['import', '--format', 'legacy', '--query-type', '5', FILE],
    { RECON_DATA_DIR: join(dir, 'data') },
    { nodeArgs: packagesHook(dir) },
  );
  expect(r.code, r.stderr).toBe(0);
  return {
    summary: JSON.parse(r.stdout) as Record<string, unknown>,
    packages: packagesLoaded(r.stderr)?.split(' ') ?? [],
  };
}

describe('recon import of new rows', () => {
  it('loads them without Kysely; a re-load, whose rows are merged, loads it', async () => {
    const first = await importFile();
    expect(first.summary).toMatchObject({ status: 'committed', rowsInserted: 8 });
    expect(first.packages).toContain('pg');
    expect(first.packages).not.toContain('kysely');
    // The same hook sees Kysely where the load uses it: the rows are stored, so they are staged and merged.
    const again = await importFile();
    expect(again.summary).toMatchObject({ status: 'committed', rowsUnchanged: 8 });
    expect(again.packages).toContain('kysely');
  });
});
