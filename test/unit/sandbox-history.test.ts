import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { easternWallTime, isoMicros, parseIsoMicros } from '../../sandbox/formats/eastern-clock.ts';
import { datesBetween } from '../../domain/time/calendar.ts';
import {
  easternDateOf,
  easternDayStartMs as easternMidnightMs,
  easternToUtc,
} from '../../domain/time/eastern.ts';
import {
  legacyAdjustmentLine,
  legacyReturnLine,
  legacyTransactionLine,
} from '../../sandbox/formats/legacy-csv.ts';
import { reportCsvChunks } from '../../sandbox/formats/report-csv.ts';
import { reportJsonChunks } from '../../sandbox/formats/report-json.ts';
import { zipSingleEntry } from '../../sandbox/formats/zip-writer.ts';
import { createHistory } from '../../sandbox/history.ts';

const OPTIONS = { seed: 99, transactions: 5000, from: '2026-10-25', to: '2026-11-08' };

async function collect(chunks: AsyncIterable<string | Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(parts);
}

describe('Eastern clock', () => {
  it('converts around both 2026 changes', () => {
    expect(new Date(easternMidnightMs('2026-03-08')).toISOString()).toBe('2026-03-08T05:00:00.000Z');
    expect(new Date(easternMidnightMs('2026-03-09')).toISOString()).toBe('2026-03-09T04:00:00.000Z');
    expect(new Date(easternMidnightMs('2026-11-01')).toISOString()).toBe('2026-11-01T04:00:00.000Z');
    expect(new Date(easternMidnightMs('2026-11-02')).toISOString()).toBe('2026-11-02T05:00:00.000Z');
    const wall = (iso: string) => easternWallTime(parseIsoMicros(iso));
    expect(wall('2026-03-08T06:59:59.999999Z')).toMatchObject({
      date: '2026-03-08',
      time: '015959',
      fold: false,
    });
    expect(wall('2026-03-08T07:00:00.000000Z')).toMatchObject({ time: '030000', fold: false });
    expect(wall('2026-11-01T05:30:00.000000Z')).toMatchObject({ time: '013000', fold: true });
    expect(wall('2026-11-01T06:30:00.000000Z')).toMatchObject({ time: '013000', fold: true });
    expect(wall('2026-11-01T07:00:00.000000Z')).toMatchObject({ time: '020000', fold: false });
    expect(isoMicros(parseIsoMicros('2026-03-08T07:30:00.000001Z'))).toBe('2026-03-08T07:30:00.000001Z');
  });

  it('follows the zone database before 2007 (first Sunday of April to last Sunday of October)', () => {
    const wall = (iso: string) => easternWallTime(parseIsoMicros(iso));
    expect(wall('2006-03-20T12:00:00Z')).toMatchObject({ date: '2006-03-20', time: '070000', fold: false });
    expect(wall('2006-04-02T06:59:59Z')).toMatchObject({ date: '2006-04-02', time: '015959', fold: false });
    expect(wall('2006-04-02T07:00:00Z')).toMatchObject({ time: '030000', fold: false });
    expect(wall('2006-10-29T05:30:00Z')).toMatchObject({ time: '013000', fold: true });
    expect(wall('2006-10-29T06:30:00Z')).toMatchObject({ time: '013000', fold: true });
    expect(wall('2006-10-29T07:00:00Z')).toMatchObject({ time: '020000', fold: false });
    expect(wall('2006-11-03T04:30:00Z')).toMatchObject({ date: '2006-11-02', time: '233000' });
    expect(new Date(easternMidnightMs('2006-04-02')).toISOString()).toBe('2006-04-02T05:00:00.000Z');
    expect(new Date(easternMidnightMs('2006-10-30')).toISOString()).toBe('2006-10-30T05:00:00.000Z');
  });

  it('agrees with domain/time/eastern.ts on every quarter hour around the 2006 and 2026 changes', () => {
    for (const day of ['2006-04-02', '2006-10-29', '2026-03-08', '2026-11-01']) {
      for (let q = -8; q < 104; q++) {
        const utcMs = easternMidnightMs(day) + q * 900_000;
        const w = easternWallTime(utcMs * 1000);
        const back = easternToUtc(w.date, w.time);
        // A repeated wall time reads back as its first (daylight) instant; every other one exactly.
        if (w.fold)
          expect(Date.parse(back.utc) === utcMs || Date.parse(back.utc) === utcMs - 3_600_000).toBe(true);
        else expect(back.utc).toBe(`${new Date(utcMs).toISOString().slice(0, 19)}.000000Z`);
        expect(w.date).toBe(easternDateOf(new Date(utcMs).toISOString()));
      }
    }
  });
});

describe('sandbox history', () => {
  it('is deterministic per index and per seed', () => {
    const a = createHistory(OPTIONS);
    const b = createHistory(OPTIONS);
    expect(a.fact(1234)).toEqual(b.fact(1234));
    expect([...a.transactions()]).toEqual([...b.transactions()]);
    expect(createHistory({ ...OPTIONS, seed: 100 }).fact(1234).amountCents).not.toBe(
      a.fact(1234).amountCents,
    );
  });

  it('windows partition the history: day by day equals all at once', () => {
    const h = createHistory(OPTIONS);
    const days = datesBetween('2026-10-24', '2026-11-22');
    const perDay = (gen: (q: { start: string; end: string }) => Iterable<{ kind: string }>) =>
      days.slice(0, -1).flatMap((d, k) => [
        ...gen({
          start: new Date(easternMidnightMs(d)).toISOString(),
          end: new Date(easternMidnightMs(days[k + 1]!)).toISOString(),
        }),
      ]);
    const sortKey = (r: object) => JSON.stringify(r);
    for (const name of [
      'transactions',
      'returns',
      'legacyTransactions',
      'legacyReturns',
      'adjustments',
    ] as const) {
      const all = [...h[name]()].map(sortKey).sort();
      const split = perDay((q) => h[name](q))
        .map(sortKey)
        .sort();
      expect(split, name).toEqual(all);
      expect(all.length, name).toBeGreaterThan(0);
    }
  });

  it('holds the documented material', () => {
    const h = createHistory(OPTIONS);
    const facts = [...h.facts()];
    expect(facts).toHaveLength(5000);
    const share = (p: (f: (typeof facts)[number]) => boolean) => facts.filter(p).length / facts.length;
    expect(share((f) => f.type === 'DEBIT')).toBeCloseTo(0.7, 1);
    expect(share((f) => f.channel === 'both')).toBeCloseTo(0.1, 1);
    expect(share((f) => f.outcome === 'REJECTED')).toBeGreaterThan(0.04);
    expect(share((f) => f.outcome === 'FAILED')).toBeGreaterThan(0.01);
    expect(
      facts.every(
        (f) => f.amountCents >= 100 && f.amountCents <= 100_000_000 && Number.isSafeInteger(f.feeCents),
      ),
    ).toBe(true);
    expect(facts.some((f) => f.return?.nextActionDate)).toBe(true);
    expect(facts.some((f) => f.adjustment && f.adjustment.amountCents < 0)).toBe(true);
    // Pending until settled, then final.
    const pending = facts.find((f) => f.settledAtMicros > f.atMicros)!;
    const asOf = isoMicros(pending.atMicros + 1);
    const early = [...h.transactions({ asOf })].find((t) => t.transaction_id === pending.transactionId)!;
    const late = [...h.transactions()].find((t) => t.transaction_id === pending.transactionId)!;
    expect([early.status, early.fee_cents]).toEqual(['PENDING', 0]);
    expect(late.status).toBe(pending.outcome === 'SUCCESSFUL' ? 'SUCCESSFUL' : 'REJECTED');
    // Legacy-visible transactions never sit on the standard-time side of the repeated hour.
    const estFold = (us: number) =>
      us >= Date.parse('2026-11-01T06:00:00Z') * 1000 && us < Date.parse('2026-11-01T07:00:00Z') * 1000;
    expect(facts.some((f) => f.channel === 'report' && estFold(f.atMicros))).toBe(true);
    expect(facts.some((f) => f.channel !== 'report' && estFold(f.atMicros))).toBe(false);
    // The conflict hook changes only the legacy amount of transactions both sources show.
    const conflicted = createHistory({ ...OPTIONS, legacyConflictRate: 1 });
    const legacy = [...conflicted.legacyTransactions()].find(
      (r) => conflicted.findByTransactionId(r.transaction_id)!.channel === 'both',
    )!;
    const fact = conflicted.findByTransactionId(legacy.transaction_id)!;
    expect([fact.legacyConflict, legacy.amount_cents]).toEqual([true, fact.amountCents + 100]);
  });

  it('streams a large history without holding it (200k transactions, one window)', () => {
    const h = createHistory({ seed: 1, transactions: 200_000, from: '2026-01-01', to: '2026-06-30' });
    let n = 0;
    for (const _ of h.transactions({ start: '2026-03-01T05:00:00.000Z', end: '2026-03-02T05:00:00.000Z' }))
      n++;
    expect(n).toBeGreaterThan(700);
    expect(n).toBeLessThan(1300);
  });
});

describe('provider format serializers', () => {
  const h = createHistory(OPTIONS);

  it('writes legacy lines with Eastern dates, implied decimals and the selected fields', () => {
    const r = [...h.legacyTransactions()][0]!;
    const line = legacyTransactionLine(r, [4, 1, 14, 5, 9]);
    expect(line).toBe(
      `${r.transaction_id},${r.transaction_on.replaceAll('-', '')},${r.raw_transaction_time},${r.amount_cents},${r.fee_cents}\n`,
    );
    const ret = [...h.legacyReturns()][0]!;
    expect(legacyReturnLine(ret).split(',')).toHaveLength(12);
    const adj = [...h.adjustments()].find((a) => a.amount_cents < 0)!;
    expect(legacyAdjustmentLine(adj)).toContain(`,${adj.amount_cents},`);
    expect(legacyAdjustmentLine(adj).startsWith(adj.adjusted_on.replaceAll('-', ''))).toBe(true);
  });

  it('writes the JSON report as one array and the CSV report with the spec 2.8 header', async () => {
    const records = [
      ...h.transactions({ start: '2026-10-26T04:00:00.000Z', end: '2026-10-27T04:00:00.000Z' }),
    ];
    const json = JSON.parse((await collect(reportJsonChunks(records, 100))).toString()) as {
      transactionId: string;
      transactionDateTime: string;
    }[];
    expect(json.map((r) => r.transactionId)).toEqual(records.map((r) => r.transaction_id));
    expect(json[0]!.transactionDateTime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect(JSON.parse((await collect(reportJsonChunks([]))).toString())).toEqual([]);
    const csv = (await collect(reportCsvChunks('TRANSACTION', records))).toString().split('\n');
    expect(csv[0]).toBe(
      'Transaction Date,Transaction Type,Merchant Transaction ID,Transaction ID,Transaction Amount,Currency,Transaction Status,Internal User ID,Transaction Fee,Merchant ID,Request Type,Payment Method,Merchant User ID,Error Code,Error Description,Country,Device Type,External Reference,Product,Payment Notification Status,Payment Region',
    );
    expect(csv).toHaveLength(records.length + 2);
  });

  it('writes a ZIP that unzip accepts, with a data descriptor and a central directory', async () => {
    const body = 'a,b\n'.repeat(50_000);
    const zip = await collect(zipSingleEntry('report.csv', [body.slice(0, 1000), body.slice(1000)]));
    expect(zip.readUInt32LE(0)).toBe(0x04034b50);
    expect(zip.readUInt32LE(zip.length - 22)).toBe(0x06054b50);
    const dir = mkdtempSync(join(tmpdir(), 'zip-'));
    writeFileSync(join(dir, 'r.zip'), zip);
    expect(execFileSync('unzip', ['-p', join(dir, 'r.zip')], { maxBuffer: 1 << 24 }).toString()).toBe(body);
  });
});
