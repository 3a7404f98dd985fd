/**
 * Parser throughput: rows/s of parseReport on a generated legacy type-5 file and a JSON report
 * (default 1,000,000 rows each), plus the cost of the line splitting alone, to see where time goes.
 *
 *   node bench/parse-speed.ts [rows]
 *
 * Files are written to bench/out/ (git-ignored) once and reused.
 */
import { createReadStream, createWriteStream, existsSync, mkdirSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { parse as csvParse } from 'csv-parse';
import { parseReport, type ParseReportOptions } from '../provider/formats/index.ts';
import { readCsvRecords } from '../provider/formats/read-csv-records.ts';
import { readLines } from '../provider/formats/read-lines.ts';
import { splitJsonArray } from '../provider/formats/split-json-array.ts';

const rows = Number(process.argv[2] ?? 1_000_000);
const dir = new URL('./out/', import.meta.url);
mkdirSync(dir, { recursive: true });

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

function legacyLine(i: number): string {
  const day = 1 + (i % 28);
  const second = i % 86_400;
  const time = `${pad(Math.floor(second / 3600), 2)}${pad(Math.floor(second / 60) % 60, 2)}${pad(second % 60, 2)}`;
  return `202603${pad(day, 2)},D,ORD-${pad(i, 9)},ET${pad(i, 12)},${pad(100 + (i % 100_000), 10)},CAD,${i % 10 === 0 ? 'F' : 'S'},IU${pad(i % 5000, 6)},0000000125,MERCH001,,C,player-${i % 5000},${time},CA,user${i % 5000}@example.com,001-00011-****${pad(i % 10_000, 4)}`;
}

function jsonRecord(i: number): string {
  const day = 1 + (i % 28);
  const micros = pad(i % 1_000_000, 6);
  return JSON.stringify({
    product: 'IBT',
    merchantId: '10001',
    merchantUserId: `player-${i % 5000}`,
    merchantTransactionId: `ORD-${pad(i, 9)}`,
    productUserId: `PU-${i % 5000}`,
    transactionId: `IBT${pad(i, 13)}`,
    transactionNotifyStatus: 'C',
    transactionRegion: 'ON',
    transactionAmount: 100 + (i % 100_000),
    currencyCode: 'CAD',
    countryCode: 'CA',
    transactionType: i % 3 === 0 ? 'CREDIT' : 'DEBIT',
    transactionStatus: 'SUCCESSFUL',
    transactionFee: 125,
    transactionDateTime: `2026-03-${pad(day, 2)}T${pad(i % 24, 2)}:${pad(i % 60, 2)}:00.${micros}Z`,
    externalReference: `EXT-${i}`,
    errorCode: null,
    errorDescription: null,
    transactionPaymentMethod: 'EFT',
  });
}

const CSV_HEADER =
  'Transaction Date,Transaction Type,Merchant Transaction ID,Transaction ID,Transaction Amount,Currency,Transaction Status,Internal User ID,Transaction Fee,Merchant ID,Request Type,Payment Method,Merchant User ID,Error Code,Error Description,Country,Device Type,External Reference,Product,Payment Notification Status,Payment Region\n';

function csvLine(i: number): string {
  const day = 1 + (i % 28);
  const error = i % 50 === 0 ? 'E302,"Consumer must re-authenticate, interactive flow"' : ',';
  return `2026-03-${pad(day, 2)}T${pad(i % 24, 2)}:${pad(i % 60, 2)}:00.${pad(i % 1_000_000, 6)}Z,DEBIT,ORD-${pad(i, 9)},IBT${pad(i, 13)},${100 + (i % 100_000)},CAD,SUCCESSFUL,PU-${i % 5000},125,10001,Direct,EFT,player-${i % 5000},${error},CA,DESKTOP,EXT-${i},IBT,C,ON`;
}

async function generate(
  name: string,
  head: string,
  line: (i: number) => string,
  sep: string,
  tail: string,
): Promise<string> {
  const path = new URL(name, dir).pathname;
  if (existsSync(path)) return path;
  const out = createWriteStream(path);
  out.write(head);
  let buffer = '';
  for (let i = 0; i < rows; i++) {
    buffer += (i === 0 ? '' : sep) + line(i);
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await once(out, 'drain');
      buffer = '';
    }
  }
  out.write(buffer + tail);
  out.end();
  await once(out, 'finish');
  return path;
}

async function time(label: string, path: string, run: () => Promise<number>): Promise<void> {
  const started = performance.now();
  const count = await run();
  const seconds = (performance.now() - started) / 1000;
  const mb = statSync(path).size / 1e6;
  console.log(
    `${label.padEnd(44)} ${String(count).padStart(8)} rows  ${seconds.toFixed(2).padStart(6)} s  ${Math.round(
      count / seconds,
    )
      .toLocaleString('en-US')
      .padStart(10)} rows/s  ${(mb / seconds).toFixed(0).padStart(4)} MB/s`,
  );
}

/** Times parseReport over the file at `path`, counting the records it yields. */
function timeParseReport(label: string, path: string, options: Omit<ParseReportOptions, 'fileName'>) {
  return time(label, path, async () => {
    let n = 0;
    for await (const row of parseReport(createReadStream(path), { ...options, fileName: 'bench' })) {
      if (row.ok) n++;
    }
    return n;
  });
}

const legacyPath = await generate(`legacy-type5-${rows}.csv`, '', legacyLine, '\n', '\n');
const jsonPath = await generate(`report-${rows}.json`, '[\n', jsonRecord, ',\n', '\n]\n');

await time('legacy type 5: line splitting only', legacyPath, async () => {
  let n = 0;
  for await (const batch of readLines(createReadStream(legacyPath), 'bench')) n += batch.lines.length;
  return n;
});
await timeParseReport('legacy type 5: parseReport', legacyPath, { format: 'legacy', queryType: '5' });
await time('JSON report: array splitting only', jsonPath, async () => {
  let n = 0;
  for await (const batch of splitJsonArray(createReadStream(jsonPath), 'bench')) n += batch.length;
  return n;
});
await timeParseReport('JSON report: parseReport', jsonPath, { format: 'report-json' });
const csvPath = await generate(`report-${rows}.csv`, CSV_HEADER, csvLine, '\n', '\n');
await time('CSV report: readCsvRecords only (hand-written)', csvPath, async () => {
  let n = -1;
  for await (const batch of readCsvRecords(createReadStream(csvPath), 'bench')) n += batch.length;
  return n;
});
await time('CSV report: csv-parse only (no line/raw info)', csvPath, async () => {
  let n = -1;
  for await (const record of createReadStream(csvPath).pipe(csvParse({ relax_column_count: true }))) {
    if (record) n++;
  }
  return n;
});
await time('CSV report: csv-parse with info and raw', csvPath, async () => {
  let n = -1;
  for await (const record of createReadStream(csvPath).pipe(
    csvParse({ relax_column_count: true, info: true, raw: true }),
  )) {
    if (record) n++;
  }
  return n;
});
await timeParseReport('CSV report: parseReport', csvPath, { format: 'report-csv', queryType: 'TRANSACTION' });
console.log(
  `heap used at the end: ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB, rss ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`,
);
