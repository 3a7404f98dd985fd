import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { matchItems, undoMatch } from '../../reconcile/manual-matches/apply.ts';
import { InvalidMatch, MatchConflict, type MatchRequest } from '../../reconcile/manual-matches/record.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { setTolerances } from '../../reconcile/tolerances/index.ts';
import { PLPGSQL_DISTANCE } from '../../migrations/0025_candidates_and_manual_matches.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

// Near-miss candidates and manual matches (issue 29, sections 1 and 2) against real PostgreSQL: the
// candidates a run stores, then 1:1, 1:N and N:1 matches that every later run honours, and undo.

let h: DatabaseHandle;
const NOW = '2026-03-20T12:00:00Z';
const RANGE = { from: '2026-03-02', to: '2026-03-04', now: NOW };
const ME = { name: 'ann', mayWriteOff: false };

beforeAll(async () => {
  h = await createTestDatabase();
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(h.db, load, [
    // A mistyped id in the ledger: M-T-1 booked as M-T-l.
    { transaction_id: 'T-1', merchant_user_id: 'u1' },
    // Split: one payin booked as two entries.
    { transaction_id: 'T-2', amount_cents: 2000, merchant_user_id: 'u2' },
    // Combined: two payins booked as one entry.
    { transaction_id: 'T-3', amount_cents: 700, merchant_user_id: 'u3' },
    { transaction_id: 'T-4', amount_cents: 300, merchant_user_id: 'u3' },
    // Combined under the first payin's id: T-5 claims the entry and disagrees on the amount.
    { transaction_id: 'T-5', amount_cents: 400, merchant_user_id: 'u5' },
    { transaction_id: 'T-6', amount_cents: 600, merchant_user_id: 'u5' },
    // Matched exactly, nobody's candidate.
    { transaction_id: 'T-OK', merchant_user_id: 'u1' },
    { transaction_id: 'T-USD', currency: 'USD', merchant_user_id: 'u1' },
    // Booked a cent short under another id, and two cents short under another.
    { transaction_id: 'T-7', merchant_user_id: 'u7' },
    { transaction_id: 'T-8', merchant_user_id: 'u8' },
  ]);
  await insertLedger(h.db, [
    { merchant_transaction_id: 'M-T-l', merchant_user_id: 'u1' },
    { merchant_transaction_id: 'M-T-2-a', amount_cents: 1200, merchant_user_id: 'u2' },
    { merchant_transaction_id: 'M-T-2-b', amount_cents: 800, merchant_user_id: 'u2' },
    { merchant_transaction_id: 'BATCH-34', amount_cents: 1000, merchant_user_id: 'u3' },
    { merchant_transaction_id: 'M-T-5', amount_cents: 1000, merchant_user_id: 'u5' },
    { merchant_transaction_id: 'M-T-OK' },
    { merchant_transaction_id: 'M-T-7x', amount_cents: 999, merchant_user_id: 'u7' },
    { merchant_transaction_id: 'M-T-8x', amount_cents: 998, merchant_user_id: 'u8' },
    // Nothing like anything but the day: another amount, no user, a far id.
    { merchant_transaction_id: 'ZZZZZZZZZZ', amount_cents: 5, booked_at: '2026-03-03T15:00:00Z' },
  ]);
  await reconcileRange(h.db, RANGE);
});
afterAll(async () => h?.close());

async function openKinds(): Promise<string[]> {
  const r = await sql<{ k: string }>`select kind || ':' || coalesce(case when kind = 'missing_at_provider'
      then merchant_transaction_id else transaction_id end, '') as k
    from discrepancies where resolved_at is null and kind not like 'notification%' order by 1`.execute(h.db);
  return r.rows.map((x) => x.k);
}

async function candidatesOf(kind: string, id: string) {
  const r = await sql<{
    rank: number;
    side: string;
    candidate_id: string;
    score: number;
    checks: unknown;
    run_id: string;
  }>`
    select c.rank, c.side, c.candidate_id, c.score, c.checks, c.run_id::text as run_id
    from match_candidates c join discrepancies d using (discrepancy_id)
    where d.kind = ${kind} and (d.transaction_id = ${id} or (d.kind = 'missing_at_provider' and d.merchant_transaction_id = ${id}))
    order by c.rank`.execute(h.db);
  return r.rows;
}

function req(p: string[], l: string[], over: Partial<MatchRequest> = {}): MatchRequest {
  return {
    account: 'default',
    providerTransactionIds: p,
    ledgerMerchantTransactionIds: l,
    note: 'booked under another id',
    origin: 'api',
    ...over,
  };
}

describe('near-miss candidates', () => {
  it('lists the other side’s near items with every check in words, not the unlike ones', async () => {
    const forT1 = await candidatesOf('missing_in_ledger', 'T-1');
    expect(forT1[0]).toMatchObject({ rank: 1, side: 'ledger', candidate_id: 'M-T-l' });
    expect(forT1[0]!.checks).toEqual([
      { check: 'amount', passed: true, detail: 'the same amount' },
      { check: 'business_date', passed: true, detail: 'the same business day' },
      { check: 'merchant_user', passed: true, detail: 'the same merchant user' },
      { check: 'id', passed: true, detail: 'merchant transaction ids 1 character apart' },
    ]);
    expect(forT1.map((c) => c.candidate_id)).not.toContain('ZZZZZZZZZZ');
    expect(await candidatesOf('missing_at_provider', 'ZZZZZZZZZZ')).toEqual([]);
    const forTypo = await candidatesOf('missing_at_provider', 'M-T-l');
    expect(forTypo[0]).toMatchObject({ side: 'provider', candidate_id: 'T-1' });
    // The split's parts: the whole payin is their candidate by user and id, not by amount.
    const forPart = await candidatesOf('missing_at_provider', 'M-T-2-a');
    expect(forPart[0]).toMatchObject({ side: 'provider', candidate_id: 'T-2' });
    expect((forPart[0]!.checks as { check: string; passed: boolean; detail: string }[])[0]).toEqual({
      check: 'amount',
      passed: false,
      detail: 'amounts differ by 800 cents; the tolerance is 0 cents',
    });
    // USD finds no CAD candidate; at most five each.
    expect(await candidatesOf('missing_in_ledger', 'T-USD')).toEqual([]);
    const most = await sql<{ n: number }>`select max(n)::int as n from (
      select count(*) as n from match_candidates group by discrepancy_id) x`.execute(h.db);
    expect(most.rows[0]!.n).toBeLessThanOrEqual(5);
  });

  it('writes nothing when run again over the same data', async () => {
    const before = await sql<{
      r: string;
    }>`select string_agg(c::text, '|' order by discrepancy_id, side, candidate_id) as r
      from match_candidates c`.execute(h.db);
    await reconcileRange(h.db, RANGE);
    const after = await sql<{
      r: string;
    }>`select string_agg(c::text, '|' order by discrepancy_id, side, candidate_id) as r
      from match_candidates c`.execute(h.db);
    expect(after.rows[0]!.r).toBe(before.rows[0]!.r);
  });
});

describe('manual matches', () => {
  it('refuses what is not a match: both sides several, no note, amounts apart, unknown ids, two currencies', async () => {
    await expect(matchItems(h.db, req(['T-3', 'T-4'], ['M-T-2-a', 'M-T-2-b']), ME)).rejects.toThrow(
      InvalidMatch,
    );
    await expect(matchItems(h.db, req(['T-1'], ['M-T-l'], { note: '  ' }), ME)).rejects.toThrow(
      /needs a note/,
    );
    await expect(matchItems(h.db, req(['T-2'], ['M-T-2-a']), ME)).rejects.toThrow(
      /differ by -800 cents CAD \(provider 2000, ledger 1200\); the tolerance is 0 cents/,
    );
    await expect(matchItems(h.db, req(['T-NONE'], ['M-T-l']), ME)).rejects.toThrow(
      /no provider transaction T-NONE/,
    );
    await expect(matchItems(h.db, req(['T-USD'], ['M-T-l']), ME)).rejects.toThrow(/within one currency/);
    const n = await sql<{ n: number }>`select count(*)::int as n from manual_matches`.execute(h.db);
    expect(n.rows[0]!.n).toBe(0);
  });

  it('1:1 closes both discrepancies through a run, and every later run keeps them matched', async () => {
    const m = await matchItems(h.db, req(['T-1'], ['M-T-l']), ME);
    expect(m).toMatchObject({ currency: 'CAD', differenceCents: 0, from: '2026-03-02', to: '2026-03-02' });
    expect(await openKinds()).not.toContain('missing_in_ledger:T-1');
    expect(await openKinds()).not.toContain('missing_at_provider:M-T-l');
    const events = await sql<{
      event: string;
      actor: string | null;
    }>`select e.event, e.actor from discrepancy_events e
      join discrepancies d using (discrepancy_id) where d.transaction_id = 'T-1' and d.kind = 'missing_in_ledger'
      order by e.event_id`.execute(h.db);
    expect(events.rows).toEqual([
      { event: 'opened', actor: null },
      { event: 'matched', actor: 'ann' },
      { event: 'resolved', actor: null },
    ]);
    await reconcileRange(h.db, { ...RANGE, now: '2026-03-27T12:00:00Z' });
    expect(await openKinds()).not.toContain('missing_in_ledger:T-1');
    await expect(matchItems(h.db, req(['T-1'], ['M-T-2-a']), ME)).rejects.toThrow(MatchConflict);
  });

  it('1:N (a split booking) and N:1 (a combined one, also under one payin’s own id)', async () => {
    await matchItems(h.db, req(['T-2'], ['M-T-2-a', 'M-T-2-b']), ME);
    await matchItems(h.db, req(['T-3', 'T-4'], ['BATCH-34']), ME);
    expect(await openKinds()).toContain('amount_mismatch:T-5');
    await matchItems(h.db, req(['T-5', 'T-6'], ['M-T-5']), ME);
    expect(await openKinds()).toEqual([
      'missing_at_provider:M-T-7x',
      'missing_at_provider:M-T-8x',
      'missing_at_provider:ZZZZZZZZZZ',
      'missing_in_ledger:T-7',
      'missing_in_ledger:T-8',
      'missing_in_ledger:T-USD',
    ]);
    const claims = await sql<{ n: number }>`select count(*)::int as n from transaction_matches
      where transaction_id in ('T-5','T-6')`.execute(h.db);
    expect(claims.rows[0]!.n).toBe(0);
  });

  it('undo reopens what the match closed, with the undo in the timeline, and the items are free again', async () => {
    const id = await sql<{ id: number }>`select match_id::int as id from manual_match_items
      where item_id = 'T-2'`.execute(h.db);
    await expect(undoMatch(h.db, id.rows[0]!.id, ' ', ME)).rejects.toThrow(/needs a note/);
    await undoMatch(h.db, id.rows[0]!.id, 'wrong entries', { name: 'bob' });
    expect(await openKinds()).toEqual(
      expect.arrayContaining([
        'missing_in_ledger:T-2',
        'missing_at_provider:M-T-2-a',
        'missing_at_provider:M-T-2-b',
      ]),
    );
    const events = await sql<{
      event: string;
      actor: string | null;
    }>`select e.event, e.actor from discrepancy_events e
      join discrepancies d using (discrepancy_id) where d.transaction_id = 'T-2' and d.kind = 'missing_in_ledger'
      order by e.event_id`.execute(h.db);
    expect(events.rows.map((e) => e.event)).toEqual([
      'opened',
      'matched',
      'resolved',
      'match_undone',
      'reopened',
    ]);
    expect(events.rows[3]!.actor).toBe('bob');
    await expect(undoMatch(h.db, id.rows[0]!.id, 'again', ME)).rejects.toThrow(MatchConflict);
    const again = await matchItems(
      h.db,
      req(['T-2'], ['M-T-2-a', 'M-T-2-b'], { note: 'right after all' }),
      ME,
    );
    expect(again.matchId).toBeGreaterThan(id.rows[0]!.id);
  });

  it('a run of a range matched before the match does not reuse that matching', async () => {
    const undo = await sql<{ id: number }>`select match_id::int as id from manual_match_items
      where item_id = 'T-3' and undone_at is null`.execute(h.db);
    await h.db.transaction().execute(async (trx) => {
      await sql`update manual_matches set undone_at = now(), undone_by = 'x', undo_note = 'x' where match_id = ${undo.rows[0]!.id}`.execute(
        trx,
      );
      await sql`update manual_match_items set undone_at = now() where match_id = ${undo.rows[0]!.id}`.execute(
        trx,
      );
    });
    await reconcileRange(h.db, RANGE);
    expect(await openKinds()).toContain('missing_in_ledger:T-3');
  });
});

describe('amounts apart: the tolerance, or a write-off by a person with the right to', () => {
  it('matches within the tolerance without a write-off', async () => {
    await setTolerances(h.db, {
      account: 'default',
      changes: [{ currency: 'CAD', amountCents: 1, dateLagBusinessDays: 0, writeOffLimitCents: 0 }],
      setBy: 'test',
    });
    const m = await matchItems(h.db, req(['T-7'], ['M-T-7x']), ME);
    expect(m).toMatchObject({ differenceCents: -1, writtenOffCents: 0 });
  });

  it('judges candidates’ amounts with the run’s tolerance', async () => {
    await reconcileRange(h.db, RANGE);
    const forT8 = await candidatesOf('missing_in_ledger', 'T-8');
    expect(forT8[0]).toMatchObject({ side: 'ledger', candidate_id: 'M-T-8x' });
    expect((forT8[0]!.checks as unknown[])[0]).toEqual({
      check: 'amount',
      passed: false,
      detail: 'amounts differ by 2 cents; the tolerance is 1 cents',
    });
  });

  it('writes the difference off only when asked, by someone who may, and reverses it on undo', async () => {
    await expect(matchItems(h.db, req(['T-8'], ['M-T-8x']), ME)).rejects.toThrow(
      /write off 2 cents \(write_off_cents/,
    );
    await expect(matchItems(h.db, req(['T-8'], ['M-T-8x'], { writeOffCents: 2 }), ME)).rejects.toThrow(
      /needs the right to write off/,
    );
    const m = await matchItems(h.db, req(['T-8'], ['M-T-8x'], { writeOffCents: 2 }), {
      name: 'root',
      mayWriteOff: true,
    });
    expect(m.writtenOffCents).toBe(2);
    expect(await openKinds()).not.toContain('missing_in_ledger:T-8');
    await undoMatch(h.db, m.matchId, 'not the same payin', { name: 'root' });
    const rows = await sql<{ amount_cents: string; written_off_by: string; reversal: boolean }>`
      select amount_cents::text, written_off_by, reversal_of is not null as reversal from write_offs
      where manual_match_id = ${m.matchId} order by write_off_id`.execute(h.db);
    expect(rows.rows).toEqual([
      { amount_cents: '-2', written_off_by: 'root', reversal: false },
      { amount_cents: '2', written_off_by: 'root', reversal: true },
    ]);
  });

  it('an undone match with a write-off: the items open again on every later run, the write-off nets to zero', async () => {
    // The match of T-8 with M-T-8x (2 cents written off) was undone above.
    for (let run = 0; run < 2; run++) {
      await reconcileRange(h.db, RANGE);
      expect(await openKinds()).toEqual(
        expect.arrayContaining(['missing_in_ledger:T-8', 'missing_at_provider:M-T-8x']),
      );
    }
    const events = await sql<{ key: string; events: string }>`
      select d.discrepancy_key as key, string_agg(e.event, ',' order by e.event_id) as events
      from discrepancies d join discrepancy_events e using (discrepancy_id)
      where d.discrepancy_key in ('missing_in_ledger:T-8', 'missing_at_provider:M-T-8x')
      group by 1 order by 1`.execute(h.db);
    expect(events.rows).toEqual([
      { key: 'missing_at_provider:M-T-8x', events: 'opened,matched,resolved,match_undone,reopened' },
      { key: 'missing_in_ledger:T-8', events: 'opened,matched,resolved,match_undone,reopened' },
    ]);
    const net = await sql<{
      n: string;
      rows: number;
    }>`select coalesce(sum(amount_cents), 0)::text as n, count(*)::int as rows
      from write_offs w join manual_matches m on m.match_id = w.manual_match_id where m.undone_at is not null`.execute(
      h.db,
    );
    expect(net.rows[0]).toEqual({ n: '0', rows: 2 });
  });
});

describe('recon_id_distance without fuzzystrmatch', () => {
  it('the PL/pgSQL form agrees with levenshtein_less_equal up to the bound', async () => {
    await sql
      .raw(PLPGSQL_DISTANCE.replace('public.recon_id_distance', 'pg_temp.id_distance_plpgsql'))
      .execute(h.db);
    const pairs = [
      ['M-T-1', 'M-T-l'],
      ['M-T-2', 'M-T-2-a'],
      ['abc', 'abc'],
      ['', 'abcd'],
      ['kitten', 'sitting'],
      ['IBT-000123', 'IBT-000132'],
      ['ZZZZZZZZZZ', 'M-T-1'],
    ];
    for (const [a, b] of pairs) {
      const r = await sql<{ mine: number; theirs: number }>`select
        pg_temp.id_distance_plpgsql(${a}, ${b}, 3) as mine, least(levenshtein_less_equal(${a}, ${b}, 3), 4) as theirs`.execute(
        h.db,
      );
      expect([a, b, Math.min(r.rows[0]!.mine, 4)]).toEqual([a, b, r.rows[0]!.theirs]);
    }
  });
});
