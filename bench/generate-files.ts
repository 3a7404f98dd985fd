import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { addDays } from '../domain/time/calendar.ts';

/**
 * Synthetic provider files for the benchmark, deterministic per row index (no randomness), written in
 * large chunks so that generation does not dominate the run.
 */

function ymd(i: number): string {
  return addDays('2026-01-01', i % 300);
}

async function writeLines(path: string, rows: number, line: (i: number) => string, head = '', tail = '') {
  const out = createWriteStream(path);
  let chunk = head;
  for (let i = 0; i < rows; i++) {
    chunk += line(i);
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  chunk += tail;
  out.end(chunk);
  await once(out, 'finish');
}

/** Legacy query type 5, default fields 1-17, no header (docs/provider-interface.md 4.4). */
export function legacyType5Line(i: number): string {
  const day = ymd(i).replaceAll('-', '');
  const secs = (i * 37) % 86_400;
  const time = [Math.floor(secs / 3600), Math.floor(secs / 60) % 60, secs % 60]
    .map((n) => String(n).padStart(2, '0'))
    .join('');
  const user = i % 50_000;
  return (
    [
      day,
      i % 3 === 0 ? 'C' : 'D',
      `MT${i}`,
      `T${String(i).padStart(10, '0')}`,
      String(100 + ((i * 7919) % 99_900)),
      'CAD',
      i % 10 === 0 ? 'F' : 'S',
      `IU${user}`,
      String(25 + (i % 5)),
      'MA000001',
      i % 10 === 0 ? '05' : '',
      'C',
      `user${user}`,
      time,
      'CA',
      `u${user}@example.com`,
      `xxx-xxxxx-xxxxxxxx${String(1000 + (user % 9000))}`,
    ].join(',') + '\n'
  );
}

export function generateLegacyType5(path: string, rows: number): Promise<void> {
  return writeLines(path, rows, legacyType5Line);
}

/** JSON report (TRANSACTION), one array element per line, as the report endpoint streams it. */
export function generateReportJson(path: string, rows: number): Promise<void> {
  const statuses = ['SUCCESSFUL', 'SUCCESSFUL', 'SUCCESSFUL', 'PENDING', 'REJECTED'];
  return writeLines(
    path,
    rows,
    (i) => {
      const user = i % 50_000;
      const micros = String((i * 7) % 1_000_000).padStart(6, '0');
      const secs = (i * 37) % 86_400;
      const hms = [Math.floor(secs / 3600), Math.floor(secs / 60) % 60, secs % 60]
        .map((n) => String(n).padStart(2, '0'))
        .join(':');
      const record = {
        product: 'IBT',
        merchantId: 'M10001',
        merchantUserId: `user${user}`,
        merchantTransactionId: `MT${i}`,
        productUserId: `PU${user}`,
        transactionId: `J${String(i).padStart(10, '0')}`,
        transactionNotifyStatus: 'C',
        transactionRegion: 'ON',
        transactionAmount: 100 + ((i * 7919) % 99_900),
        currencyCode: 'CAD',
        countryCode: 'CA',
        transactionType: i % 3 === 0 ? 'CREDIT' : 'DEBIT',
        transactionStatus: statuses[i % statuses.length],
        transactionFee: 25 + (i % 5),
        transactionDateTime: `${ymd(i)}T${hms}.${micros}Z`,
        externalReference: `EXT${i}`,
        errorCode: null,
        errorMessage: null,
        transactionPaymentMethod: 'EFT',
      };
      return `${i === 0 ? '' : ',\n'}${JSON.stringify(record)}`;
    },
    '[\n',
    '\n]\n',
  );
}
