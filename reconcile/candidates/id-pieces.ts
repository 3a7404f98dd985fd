/**
 * The blocking key of the id check (docs/architecture.md, "Near-miss candidates"): which pieces of a
 * provider item's merchant transaction id a ledger entry's id must contain, and where, for the two
 * ids to be at most `k` edits apart. Pure arithmetic on lengths: the SQL of candidate-pairs.ts cuts
 * the ids themselves on these shapes.
 *
 * Why it loses no pair (the pigeonhole): cut the id `a` into disjoint pieces. An alignment of `a`
 * with `b` by e <= k edits touches at most k of them (an insertion between two pieces touches
 * neither), so of any k + 1 pieces one is untouched: it appears in `b` unchanged, shifted by d, the
 * insertions less the deletions before it. The edits before it are at least |d| and those after it at
 * least |(|b| - |a|) - d|, and together at most k: |d| + |(|b| - |a|) - d| <= k (for ids of one length,
 * |d| <= k / 2; bounding each term by k alone probed twice as many positions, and the id check computed
 * twice as many edit distances: docs/benchmark-record.md §2). The SQL keeps, of each id's pieces,
 * the k + 1 that the fewest ledger ids contain at those positions (a piece all ids share, such as a
 * common prefix, finds every pair), and pairs the ids that share one. An id shorter than k + 1
 * characters has no k + 1 pieces and is compared with every id at most k characters longer instead
 * (candidate-pairs.ts).
 */

/** Piece `seg` of an id of `idLength` characters: `len` characters from `start` (0-based). */
export interface PieceShape {
  readonly idLength: number;
  readonly seg: number;
  readonly start: number;
  readonly len: number;
}

/** Where in an id of `probeLength` characters piece `seg` of an id of `idLength` may appear. */
export interface ProbeShape extends PieceShape {
  readonly probeLength: number;
}

/**
 * How many pieces an id of n characters is cut into: about two characters each, so that there is a
 * choice of k + 1 among them, at least k + 1 and at most 2(k + 1).
 */
export function pieceCount(n: number, k: number): number {
  return Math.max(k + 1, Math.min(2 * (k + 1), Math.floor(n / 2)));
}

/** The pieces of an id of n >= k + 1 characters: as even as they can be, the longer ones last. */
export function piecesOf(n: number, k: number): PieceShape[] {
  const count = pieceCount(n, k);
  const short = Math.floor(n / count);
  const longFrom = count - (n % count);
  return Array.from({ length: count }, (_, seg) => ({
    idLength: n,
    seg,
    start: seg * short + Math.max(0, seg - longFrom),
    len: short + (seg >= longFrom ? 1 : 0),
  }));
}

/** The pieces of every id length that can be cut into k + 1 (k + 1..maxLength). */
export function pieceShapes(k: number, maxLength: number): PieceShape[] {
  const out: PieceShape[] = [];
  for (let n = k + 1; n <= maxLength; n++) out.push(...piecesOf(n, k));
  return out;
}

/**
 * For every probed id length m (1..maxLength) and every piece of an id of a length n within k of m:
 * the positions of m's id where that piece can appear when the two are at most k edits apart.
 */
export function probeShapes(k: number, maxLength: number): ProbeShape[] {
  const out: ProbeShape[] = [];
  for (let m = 1; m <= maxLength; m++)
    for (let n = Math.max(k + 1, m - k); n <= Math.min(maxLength, m + k); n++)
      for (const p of piecesOf(n, k)) {
        const lengthDiff = m - n;
        for (let d = Math.max(-k, lengthDiff - k); d <= Math.min(k, lengthDiff + k); d++)
          if (Math.abs(d) + Math.abs(lengthDiff - d) <= k && p.start + d >= 0 && p.start + d + p.len <= m)
            out.push({ probeLength: m, idLength: n, seg: p.seg, start: p.start + d, len: p.len });
      }
  return out;
}
