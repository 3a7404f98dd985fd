import { describe, expect, it } from 'vitest';
import { pieceShapes, piecesOf, probeShapes } from '../../reconcile/candidates/id-pieces.ts';
import { generator } from '../support/seeded-random.ts';

// The id check's blocking key (reconcile/candidates/id-pieces.ts) loses no pair: whenever two ids are
// at most k edits apart, a piece of the first appears in the second at one of the probed positions.

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length]!;
}

function edited(a: string, edits: number, next: () => number, alphabet: string): string {
  let s = a;
  const ch = () => alphabet[Math.floor(next() * alphabet.length)]!;
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(next() * (s.length + 1));
    const op = Math.floor(next() * 3);
    if (op === 0) s = s.slice(0, at) + ch() + s.slice(at);
    else if (op === 1 && s.length > 0)
      s = s.slice(0, Math.min(at, s.length - 1)) + s.slice(Math.min(at, s.length - 1) + 1);
    else if (s.length > 0)
      s = s.slice(0, Math.min(at, s.length - 1)) + ch() + s.slice(Math.min(at, s.length - 1) + 1);
  }
  return s;
}

describe('the id pieces', () => {
  it('cut an id into k + 1 to 2(k + 1) pieces that cover it, in order', () => {
    for (const k of [1, 2, 3])
      for (let n = k + 1; n <= 40; n++) {
        const p = piecesOf(n, k);
        expect(p.length).toBeGreaterThanOrEqual(k + 1);
        expect(p.length).toBeLessThanOrEqual(2 * (k + 1));
        expect(p.map((x) => x.len).reduce((a, b) => a + b)).toBe(n);
        p.forEach((x, i) => expect(x.start).toBe(i === 0 ? 0 : p[i - 1]!.start + p[i - 1]!.len));
        expect(Math.max(...p.map((x) => x.len)) - Math.min(...p.map((x) => x.len))).toBeLessThanOrEqual(1);
      }
  });

  it('find every pair within k edits by any k + 1 of the pieces (random ids, 0..k+2 edits apart)', () => {
    const k = 3;
    const maxLength = 20;
    const pieces = pieceShapes(k, maxLength);
    const probes = probeShapes(k, maxLength);
    const keysOf = (a: string) =>
      pieces
        .filter((p) => p.idLength === a.length)
        .map((p) => `${p.idLength}/${p.seg}/${a.slice(p.start, p.start + p.len)}`);
    const probed = (b: string) =>
      probes
        .filter((p) => p.probeLength === b.length)
        .map((p) => `${p.idLength}/${p.seg}/${b.slice(p.start, p.start + p.len)}`);
    const { next } = generator(30);
    let within = 0;
    let found = 0;
    for (let round = 0; round < 20_000; round++) {
      const alphabet = round % 2 === 0 ? '01' : '0123456789M-';
      const n = k + 1 + Math.floor(next() * (maxLength - k));
      const a = Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]!).join('');
      const b = edited(a, Math.floor(next() * (k + 3)), next, alphabet);
      if (b.length === 0 || b.length > maxLength || editDistance(a, b) > k) continue;
      within += 1;
      // At most k pieces of a are lost: any k + 1 of them, the SQL's choice, keep one.
      const keys = keysOf(a);
      const probedKeys = new Set(probed(b));
      const kept = keys.filter((x) => probedKeys.has(x)).length;
      if (kept >= keys.length - k) found += 1;
      else
        expect.fail(
          `${a} and ${b}: ${editDistance(a, b)} edits apart, ${kept} of ${keys.length} pieces found`,
        );
    }
    expect(within).toBeGreaterThan(5_000);
    expect(found).toBe(within);
  });

  it('probe no position beyond what the edits allow (the same length: k / 2 either way)', () => {
    const shifts = probeShapes(3, 12)
      .filter((p) => p.probeLength === 12 && p.idLength === 12 && p.seg === 0)
      .map((p) => p.start);
    // Six pieces of 2; the first at 0 can move right by 1 only: a piece shifted by d in an id of the
    // same length needs |d| edits before it and |d| after it, 2|d| <= 3.
    expect(piecesOf(12, 3).map((p) => [p.start, p.len])).toEqual([
      [0, 2],
      [2, 2],
      [4, 2],
      [6, 2],
      [8, 2],
      [10, 2],
    ]);
    expect(shifts).toEqual([0, 1]);
    // One character longer: 1 edit at least; the piece moves by -1..2 (|d| + |1 - d| <= 3).
    const longer = probeShapes(3, 13)
      .filter((p) => p.probeLength === 13 && p.idLength === 12 && p.seg === 2)
      .map((p) => p.start);
    expect(longer).toEqual([3, 4, 5, 6]);
  });
});
