import { createReadStream } from 'node:fs';
import { createDatabase, createPool, type DatabaseHandle } from '../db/connect.ts';
import { loadReport } from '../ingest/load/load-report.ts';
import type { ReportFormat, Source } from '../domain/records.ts';

/**
 * One benchmark load in its own process, so that its peak RSS is the loader's alone.
 * argv: DATABASE_URL SOURCE FORMAT QUERY_TYPE FILE. Prints {summary, maxRssKiB} as JSON.
 */
const [url, source, format, queryType, file] = process.argv.slice(2) as [
  string,
  Source,
  ReportFormat,
  string,
  string,
];
const pool = createPool(url, 6);
const db = createDatabase(pool);
const handle: DatabaseHandle = { db, pool, connectionString: url, close: () => db.destroy() };
try {
  const summary = await loadReport(
    handle,
    { source, format, queryType, fileName: file, origin: 'file', environment: 'staging' },
    createReadStream(file, { highWaterMark: 256 * 1024 }),
  );
  process.stdout.write(`${JSON.stringify({ summary, maxRssKiB: process.resourceUsage().maxRSS })}\n`);
} finally {
  await handle.close();
}
