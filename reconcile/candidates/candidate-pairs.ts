/**
 * The pairs the candidates are ranked from (find-candidates.ts): an item of the run's dates (`t`)
 * with an item of the other side (`c`), of its currency and within the search window, that can pass
 * one of the three checks that make a candidate (docs/finance.md, Candidates): the amount within the
 * tolerance, the same merchant user, merchant transaction ids at most MAX_ID_DISTANCE edits apart.
 *
 * Each check has its own necessary condition, and the pairs are the union of the three, found through
 * an index or a hash rather than by pairing every item with every item of the nearby dates (about 7
 * million pairs for 7,000 missing items over 30 days at 1,000,000 rows, 98% of which passed no check):
 * - amount: the other side's items of the currency whose amount is within the tolerance, one index
 *   range per item (cand_items' amount index);
 * - merchant user: the other side's items of the same merchant user (its index); a pair with an
 *   unknown user fails the check;
 * - id: a provider item's id shares a piece with the ledger entry's at a position the edits allow
 *   (id-pieces.ts, which proves it); an id shorter than the number of pieces is compared with every
 *   ledger id at most MAX_ID_DISTANCE characters longer.
 * A pair in none of them fails every check, so the candidates are those the pairing of every nearby
 * item found (test/integration/candidate-pairs.test.ts compares the two on random items).
 */
import { type RawBuilder, sql } from 'kysely';
import { exec, type RuleContext } from '../rules/statement.ts';
import { pieceShapes, probeShapes } from './id-pieces.ts';

/** Ids farther apart than this many edits fail the id check. */
export const MAX_ID_DISTANCE = 3;
/** Ids longer than this are not compared (a mistyped id is short; the distance is quadratic). */
export const MAX_ID_LENGTH = 64;

/** Whether a pair (`p`, a row of {@link pairs}) passes one of the checks that make a candidate. */
export const PASSES_A_CHECK = sql`(p.amount_diff <= p.amount_tolerance or coalesce(p.user_a = p.user_b, false)
  or coalesce(p.id_distance <= ${MAX_ID_DISTANCE}, false))`;

/** Every id length's pieces, and where a ledger id of each length can hold them. */
const PIECES = pieceShapes(MAX_ID_DISTANCE, MAX_ID_LENGTH);
const PROBES = probeShapes(MAX_ID_DISTANCE, MAX_ID_LENGTH);

/** The lengths of the items' ids on each side: the shapes of other lengths find nothing. */
async function idLengths(ctx: RuleContext): Promise<{ provider: Set<number>; ledger: Set<number> }> {
  const r = await sql<{ side: string; len: number }>`select distinct side, length(mtid)::int as len
    from cand_items where length(mtid) between 1 and ${MAX_ID_LENGTH}`.execute(ctx.trx);
  const of = (side: string) => new Set(r.rows.filter((x) => x.side === side).map((x) => x.len));
  return { provider: of('provider'), ledger: of('ledger') };
}

/**
 * Numbers cand_items (n), indexes what the amount and merchant user checks need, and cuts the ids
 * into the pieces the id check's pairs share (cand_pieces: provider items; cand_probes: ledger items).
 */
export async function indexItems(ctx: RuleContext): Promise<void> {
  await exec(ctx, sql`alter table cand_items add column n int generated always as identity`);
  await exec(ctx, sql`create index on cand_items (currency, side, amount_cents, business_date)`);
  await exec(
    ctx,
    sql`create index on cand_items (currency, side, merchant_user_id, business_date)
      where merchant_user_id is not null`,
  );
  const lengths = await idLengths(ctx);
  const probes = PROBES.filter((p) => lengths.ledger.has(p.probeLength) && lengths.provider.has(p.idLength));
  await exec(
    ctx,
    sql`create temp table cand_probes on commit drop as
      select distinct i.n as item, i.currency, i.business_date, s.id_length, s.seg,
        substr(i.mtid, s.start + 1, s.len) collate "C" as piece, i.mtid
      from cand_items i
      join unnest(${probes.map((p) => p.probeLength)}::int[], ${probes.map((p) => p.idLength)}::int[],
        ${probes.map((p) => p.seg)}::int[], ${probes.map((p) => p.start)}::int[], ${probes.map((p) => p.len)}::int[])
        s(probe_length, id_length, seg, start, len) on s.probe_length = length(i.mtid)
      where i.side = 'ledger'`,
  );
  // Of each provider id's pieces, the MAX_ID_DISTANCE + 1 that the fewest ledger ids contain.
  const pieces = PIECES.filter((p) => lengths.provider.has(p.idLength));
  await exec(
    ctx,
    sql`create temp table cand_pieces on commit drop as
      select item, currency, business_date, id_length, seg, piece, mtid from (
        select x.*, row_number() over (partition by x.item order by coalesce(f.n, 0), x.seg) as choice
        from (select i.n as item, i.currency, i.business_date, s.id_length, s.seg,
            substr(i.mtid, s.start + 1, s.len) collate "C" as piece, i.mtid
          from cand_items i
          join unnest(${pieces.map((p) => p.idLength)}::int[], ${pieces.map((p) => p.seg)}::int[],
            ${pieces.map((p) => p.start)}::int[], ${pieces.map((p) => p.len)}::int[]) s(id_length, seg, start, len)
            on s.id_length = length(i.mtid)
          where i.side = 'provider') x
        left join (select currency, id_length, seg, piece, count(*) as n from cand_probes group by 1, 2, 3, 4) f
          on f.currency = x.currency and f.id_length = x.id_length and f.seg = x.seg and f.piece = x.piece
      ) chosen
      where choice <= ${MAX_ID_DISTANCE + 1}`,
  );
  // A piece's probes within the search window, one range scan (idPairs).
  await exec(ctx, sql`create index on cand_probes (currency, id_length, seg, piece, business_date)`);
  await exec(ctx, sql`analyze cand_items, cand_pieces, cand_probes`);
}

/** The other side of `t`. */
const OTHER_SIDE = sql`(case t.side when 'provider' then 'ledger' else 'provider' end)`;

/**
 * The provider item `p` and the ledger item `l` of each pair that passes the id check (p, l), one of
 * them an item `from` selects (see {@link pairs}). The pieces find the pairs that can pass it (most
 * of them do not: ids numbered in sequence share pieces with their neighbours: 553,000 rows for
 * 3,462 pairs passing at 1,000,000 rows). A full run's pieces each read the probes of their key
 * within the search window, one range of cand_probes' index (its last column the date), instead of
 * joining every piece with every probe of its key and testing the dates after (2.5 million key
 * matches for those 553,000: the ranking 0.41-0.50 s of server CPU against 0.72-0.82 s,
 * docs/benchmark-record.md §2); the distance is computed on the joined rows themselves,
 * whose pieces carry their ids, and only for pairs with an item `from` selects (a run over changed
 * keys computes it for the few items it looks at). Only the pairs that pass are kept: the others are
 * not carried, in both directions, into the ranking, nor made distinct first. A pair that fails the
 * id check is a candidate only through the amount or the merchant user, whose own conditions find it.
 *
 * `few` (a run over changed keys: the changed items, then the targets): the pieces and the probes of
 * the items `from` selects are joined with the other side's, each half on its own, instead of every
 * piece with every probe filtered after: at 1,000,000 rows the join of all of them over the days
 * around one changed item matched 600,000 keys for 30 rows. Not for a full run, whose `from` is most
 * items: there the two halves would each match most of those keys.
 */
function idPairs(days: number, from: RawBuilder<unknown>, few: boolean): RawBuilder<unknown> {
  const near = (a: string, b: string) =>
    sql`${sql.ref(`${b}.business_date`)} between ${sql.ref(`${a}.business_date`)} - ${days}::int
      and ${sql.ref(`${a}.business_date`)} + ${days}::int`;
  const fromItems = sql`(select t.n from cand_items t where ${from})`;
  const passes = (
    p: string,
    l: string,
  ) => sql`(${sql.ref(p)} in ${fromItems} or ${sql.ref(l)} in ${fromItems})
    and public.recon_id_distance(p.mtid, l.mtid, ${MAX_ID_DISTANCE}) <= ${MAX_ID_DISTANCE}`;
  const sameKey = sql`l.currency = p.currency and l.id_length = p.id_length and l.seg = p.seg and l.piece = p.piece`;
  const distance = sql`public.recon_id_distance(p.mtid, l.mtid, ${MAX_ID_DISTANCE}) <= ${MAX_ID_DISTANCE}`;
  const pieces = few
    ? sql`select p.item as p, l.item as l
        from (select * from cand_pieces p where p.item in ${fromItems} offset 0) p
        join cand_probes l on ${sameKey} where ${near('p', 'l')} and ${distance}
      union
      select p.item, l.item from (select * from cand_probes l where l.item in ${fromItems} offset 0) l
        join cand_pieces p on ${sameKey} where ${near('p', 'l')} and ${distance}`
    : sql`select p.item as p, l.item as l from cand_pieces p
      cross join lateral (select l.item, l.mtid from cand_probes l where ${sameKey} and ${near('p', 'l')} offset 0) l
      where ${passes('p.item', 'l.item')}`;
  return sql`${pieces}
    union
    select p.n, l.n from cand_items p
      join cand_items l on l.currency = p.currency and l.side = 'ledger' and ${near('p', 'l')}
        and length(l.mtid) <= length(p.mtid) + ${MAX_ID_DISTANCE}
      where p.side = 'provider' and length(p.mtid) <= ${MAX_ID_DISTANCE} and ${passes('p.n', 'l.n')}`;
}

/**
 * The items (t, c) of the pairs of the items `from` selects (`t`) that can pass a check: the union of
 * each check's necessary condition (see the module's comment). One index probe per item and check
 * (lateral, offset 0: a nested loop whatever the planner's estimates).
 */
function blockedPairs(days: number, from: RawBuilder<unknown>, few: boolean): RawBuilder<unknown> {
  const window = sql`c.business_date between t.business_date - ${days}::int and t.business_date + ${days}::int`;
  return sql`select t.n as t_n, c.n as c_n from cand_items t
      join cand_tolerance tol on tol.currency = t.currency
      cross join lateral (select c.n from cand_items c where c.currency = t.currency and c.side = ${OTHER_SIDE}
        and c.amount_cents between t.amount_cents - tol.amount_cents and t.amount_cents + tol.amount_cents
        and ${window} offset 0) c
      where ${from}
    union
    select t.n, c.n from cand_items t
      cross join lateral (select c.n from cand_items c where c.currency = t.currency and c.side = ${OTHER_SIDE}
        and c.merchant_user_id = t.merchant_user_id and ${window} offset 0) c
      where ${from} and t.merchant_user_id is not null
    union
    select x.t_n, x.c_n from (${idPairs(days, from, few)}) i
      cross join lateral (values (i.p, i.l), (i.l, i.p)) x(t_n, c_n)
      join cand_items t on t.n = x.t_n
      where ${from}`;
}

/**
 * Each pair of an item `from` selects (`t`: by default every item of the run's dates) with an item of
 * the other side that can pass a check, with its checks' values. Read once by the ranking
 * (find-candidates.ts), never stored; the id distance is computed for these pairs only. `which`
 * narrows the pairs further (on `t` or their candidates `c`). The pairs are found from the items
 * `from` selects only, so that a run over changed keys pairs the few items it looks at
 * (changed-candidates.ts), not every item of the days around them; `few` says they are few (see
 * idPairs).
 */
export function pairs(
  days: number,
  which: RawBuilder<unknown> = sql`true`,
  from: RawBuilder<unknown> = sql`t.target`,
  few = false,
): RawBuilder<unknown> {
  return sql`select t.discrepancy_id, t.business_date, c.side, c.item_id as candidate_id,
        c.discrepancy_id as candidate_discrepancy_id, c.amount_cents, c.business_date as candidate_business_date,
        c.mtid as merchant_transaction_id, tol.amount_cents as amount_tolerance, tol.lag_days,
        abs(c.amount_cents - t.amount_cents) as amount_diff, abs(dc.ordinal - dt.ordinal) as days_apart,
        t.merchant_user_id as user_a, c.merchant_user_id as user_b, t.mtid as id_a, c.mtid as id_b,
        case when length(t.mtid) <= ${MAX_ID_LENGTH} and length(c.mtid) <= ${MAX_ID_LENGTH}
          then public.recon_id_distance(t.mtid, c.mtid, ${MAX_ID_DISTANCE}) end as id_distance
      from (${blockedPairs(days, from, few)}) b
      join cand_items t on t.n = b.t_n
      join cand_items c on c.n = b.c_n
      join cand_tolerance tol on tol.currency = t.currency
      join cand_days dt on dt.day = t.business_date
      join cand_days dc on dc.day = c.business_date
      where ${which}`;
}
