import type { Readable } from 'node:stream';
import type { DatabaseHandle } from '../db/connect.ts';
import type { Config } from '../lib/config.ts';
import type { LoadSummary } from '../lib/ingest/load-report.ts';

type Progress = (p: { rowsRead: number; bytes: number }) => void;

/** Progress on stderr, only for a person watching a terminal. */
function progressPrinter(): Progress | undefined {
  if (!process.stderr.isTTY) return undefined;
  return (p) => process.stderr.write(`\rread ${p.rowsRead} rows, ${(p.bytes / 1048576).toFixed(1)} MiB`);
}

/**
 * The body of `recon import` and `recon ledger import`: opens the file (an unreadable one fails before
 * the database is touched), loads it with origin 'file' and the configured environment, shows progress
 * on a terminal, prints the load summary as JSON on stdout, and closes the warehouse.
 */
export async function loadFileAndPrint(
  config: Config,
  file: string,
  load: (
    handle: DatabaseHandle,
    request: { fileName: string; origin: 'file'; environment: Config['environment']; onProgress?: Progress },
    input: Readable,
  ) => Promise<LoadSummary>,
): Promise<void> {
  const { openInput } = await import('../lib/ingest/open-input.ts');
  const { openDatabase } = await import('../db/connect.ts');
  const input = await openInput(file);
  const handle = await openDatabase(config, { watch: true });
  try {
    const onProgress = progressPrinter();
    const summary = await load(
      handle,
      {
        fileName: file,
        origin: 'file',
        environment: config.environment,
        ...(onProgress ? { onProgress } : {}),
      },
      input,
    );
    if (process.stderr.isTTY) process.stderr.write('\n');
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  } finally {
    await handle.close();
  }
}
