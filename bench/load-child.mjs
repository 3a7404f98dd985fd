// JavaScript, as bin/recon.mjs is: Node strips no types for its entry point, and so does not load its
// type stripper at each start (docs/benchmark-record.md §3).
import { createReadStream } from 'node:fs';
import { enableCompileCache } from 'node:module';

// As bin/recon.mjs starts: with the compile cache, before the loader's modules load.
enableCompileCache(new URL('../.cache/node-compile-cache', import.meta.url).pathname);
const { createPool } = await import('../db/pool.ts');
const { loadReport } = await import('../ingest/load/load-report.ts');

/**
 * One benchmark load in its own process, so that its peak RSS is the loader's alone.
 * argv: DATABASE_URL SOURCE FORMAT QUERY_TYPE FILE. Prints {summary, maxRssKiB, cpuSeconds} as JSON
 * (cpuSeconds: the process's user + system CPU, startup included, as `recon import` spends it).
 */
const [url, source, format, queryType, file] = process.argv.slice(2);
const pool = createPool(url, 6);
// As recon import opens the warehouse (cli/load-file.ts): its pool, without Kysely.
const handle = { pool, connectionString: url, close: () => pool.end() };
try {
  const summary = await loadReport(
    handle,
    { source, format, queryType, fileName: file, origin: 'file', environment: 'staging' },
    createReadStream(file, { highWaterMark: 256 * 1024 }),
  );
  const usage = process.resourceUsage();
  const cpuSeconds = (usage.userCPUTime + usage.systemCPUTime) / 1e6;
  process.stdout.write(`${JSON.stringify({ summary, maxRssKiB: usage.maxRSS, cpuSeconds })}\n`);
} finally {
  await handle.close();
}
