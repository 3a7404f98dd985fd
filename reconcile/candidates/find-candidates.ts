/**
 * Near-miss candidates (issue 29, section 1; docs/finance.md, Candidates). For every open
 * missing_in_ledger (a provider transaction the ledger lacks) and missing_at_provider (a ledger entry
 * the provider lacks) discrepancy of a run's dates: up to five unmatched items of the other side, of
 * the same account (the run's scope) and currency, booked within a few days, each with four checks
 * passed or failed in words (amount within the tolerance, business dates within the lag, the same
 * merchant user, merchant transaction ids a few characters apart) and a score that orders them.
 *
 * Set-based, in the run's transaction, after the lifecycle: the unmatched items are the open missing_*
 * discrepancies themselves, read through discrepancies_unmatched_idx for the run's dates and a few
 * days around them (migration 0025), never a join of everything unmatched. A candidate must pass the
 * amount, the merchant user or the id check: the date alone makes no candidate, and the pairs are
 * found through what each check needs (candidate-pairs.ts). An item a person matched by hand is
 * nobody's candidate. Only what changed is written to match_candidates.
 *
 * A ledger entry still inside its grace period (no missing_at_provider yet: the provider may still
 * report it) is a candidate of missing_in_ledger items all the same: a payin booked late under a
 * mistyped id is that case, and the person who matches it by hand today need not wait for the grace
 * period to run out. It has no candidates of its own (it is not a discrepancy).
 */
import { type RawBuilder, sql } from 'kysely';
import { addDays } from '../../domain/time/calendar.ts';
import { easternDayStartUtc } from '../../domain/time/eastern.ts';
import { isBusinessDay } from '../../domain/time/business-days.ts';
import { manuallyMatched } from '../rules/manual-matches.ts';
import { keyJoin } from '../rules/sql-terms.ts';
import { dueThroughFor } from '../rules/tolerance-terms.ts';
import { exec, type RuleContext } from '../rules/statement.ts';
import { indexItems, MAX_ID_DISTANCE, pairs } from './candidate-pairs.ts';

/** At most this many candidates per discrepancy. */
export const MAX_CANDIDATES = 5;
/** Calendar days searched on each side of a date beyond the tolerance's lag. */
const SEARCH_DAYS = 5;

/** Calendar days around a date searched for candidates: the lag in business days, and a margin. */
export function searchDays(maxLagBusinessDays: number): number {
  // A business day is at most four calendar days away from the previous one (a long weekend).
  return SEARCH_DAYS + 2 * maxLagBusinessDays;
}

/** Each date of from..to with its business-day ordinal (a non-business day shares its previous one's). */
function businessDayOrdinals(
  from: string,
  to: string,
  civicHoliday: boolean,
): { dates: string[]; ordinals: number[] } {
  const dates: string[] = [];
  const ordinals: number[] = [];
  let n = 0;
  for (let d = from; d <= to; d = addDays(d, 1)) {
    if (isBusinessDay(d, { civicHoliday })) n += 1;
    dates.push(d);
    ordinals.push(n);
  }
  return { dates, ordinals };
}

/**
 * The open missing items (`d`) of the searched dates, from..to and `days` around them, that can be
 * candidates; `dates` narrows them (a run over changed keys: the days around what changed,
 * reconcile/candidates/changed-candidates.ts).
 */
export function itemCondition(
  ctx: RuleContext,
  days: number,
  dates: RawBuilder<unknown> = sql`true`,
): RawBuilder<unknown> {
  const { from, to } = ctx;
  return sql`d.resolved_at is null and d.kind in ('missing_in_ledger','missing_at_provider')
        and d.business_date between ${from}::date - ${days}::int and ${to}::date + ${days}::int and ${dates}
        and d.currency is not null and d.expected_amount_cents is not null
        and (d.kind <> 'missing_in_ledger' or d.transaction_id is not null)
        and not ${sql.raw(
          `(case d.kind when 'missing_in_ledger' then ${manuallyMatched('provider', 'd.transaction_id')}
            else ${manuallyMatched('ledger', 'd.merchant_transaction_id')} end)`,
        )}`;
}

/** The items of {@link itemCondition}: cand_items (target: of the run's own dates). */
export async function collectItems(
  ctx: RuleContext,
  days: number,
  dates: RawBuilder<unknown> = sql`true`,
): Promise<void> {
  const { from, to } = ctx;
  await exec(
    ctx,
    sql`create temp table cand_items on commit drop as
      select d.discrepancy_id, d.currency, d.business_date,
        case d.kind when 'missing_in_ledger' then 'provider' else 'ledger' end as side,
        case d.kind when 'missing_in_ledger' then d.transaction_id else d.merchant_transaction_id end as item_id,
        d.merchant_transaction_id as mtid, d.expected_amount_cents as amount_cents,
        coalesce(p.merchant_user_id, l.merchant_user_id) as merchant_user_id,
        d.business_date between ${from}::date and ${to}::date as target
      from discrepancies d
      -- The kind inside the lateral subquery, where it is a one-time filter: each item probes the
      -- key of its own side only, its account and id (as join conditions, every item probed both
      -- sides, each by its id alone, skipping over the accounts: a first run's 7,000 items at
      -- 1,000,000 rows, 0.27 s quiet).
      left join lateral (select p.merchant_user_id from provider_transactions p
        where d.kind = 'missing_in_ledger' and p.account = d.account and p.transaction_id = d.transaction_id offset 0) p on true
      left join lateral (select l.merchant_user_id from merchant_ledger l
        where d.kind = 'missing_at_provider' and l.account = d.account
          and l.merchant_transaction_id = d.merchant_transaction_id offset 0) l on true
      where ${itemCondition(ctx, days, dates)}`,
  );
  await collectEntriesInGrace(ctx, days);
}

/**
 * Adds to cand_items the ledger entries of the searched dates still inside their grace period: booked
 * after the due date (the earliest of the currencies', a date lag making it earlier), unclaimed by a
 * provider row and unmatched by hand, as the missing_at_provider rule will judge them once due.
 */
async function collectEntriesInGrace(ctx: RuleContext, days: number): Promise<void> {
  const due = [ctx.dueThrough, ...(ctx.tolerances?.currencies ?? []).map((t) => t.dueThrough)].sort()[0]!;
  const first = [addDays(ctx.from, -days), addDays(due, 1)].sort()[1]!;
  const last = addDays(ctx.to, days);
  if (first > last) return;
  await exec(
    ctx,
    sql`insert into cand_items (discrepancy_id, currency, business_date, side, item_id, mtid, amount_cents,
        merchant_user_id, target)
      select null, l.currency, (l.booked_at at time zone 'America/Toronto')::date, 'ledger', l.merchant_transaction_id,
        l.merchant_transaction_id, l.amount_cents, l.merchant_user_id, false
      from merchant_ledger l
      where l.booked_at >= ${easternDayStartUtc(first)}::timestamptz
        and l.booked_at < ${easternDayStartUtc(addDays(last, 1))}::timestamptz
        and (l.booked_at at time zone 'America/Toronto')::date > ${dueThroughFor(ctx, 'l.currency')}
        and l.transaction_type in ('DEBIT','CREDIT') and l.status not in ('REJECTED','FAILED')
        and not exists (select 1 from provider_transactions p where ${sql.raw(keyJoin('p', 'l', 'merchant_transaction_id'))}
          and not ${sql.raw(manuallyMatched('provider', 'p.transaction_id'))})
        and not ${sql.raw(manuallyMatched('ledger', 'l.merchant_transaction_id'))}
        and not exists (select 1 from cand_items c where c.side = 'ledger' and c.item_id = l.merchant_transaction_id)`,
  );
}

/** The run's tolerance of each currency of the items (none: exact), as a table (cand_tolerance). */
export async function tolerancesTable(ctx: RuleContext): Promise<void> {
  const r = await sql<{
    currency: string;
  }>`select distinct currency::text as currency from cand_items`.execute(ctx.trx);
  const currencies = r.rows.map((x) => x.currency);
  const of = (c: string) => ctx.tolerances?.currencies.find((t) => t.currency === c);
  const amount = currencies.map((c) => of(c)?.amountCents ?? 0);
  const lag = currencies.map((c) => of(c)?.dateLagBusinessDays ?? 0);
  await exec(
    ctx,
    sql`create temp table cand_tolerance on commit drop as
      select * from unnest(${currencies}::text[], ${amount}::bigint[], ${lag}::int[]) as t(currency, amount_cents, lag_days)`,
  );
  await exec(ctx, sql`analyze cand_tolerance`);
}

/** Every check in words: [{check, passed, detail}]; money in cents with its currency's tolerance. */
const CHECKS = sql.raw(`jsonb_build_array(
  jsonb_build_object('check', 'amount', 'passed', x.amount_ok, 'detail',
    case when x.amount_diff = 0 then 'the same amount'
      else 'amounts differ by ' || x.amount_diff || ' cents; the tolerance is ' || x.amount_tolerance || ' cents' end),
  jsonb_build_object('check', 'business_date', 'passed', x.date_ok, 'detail',
    case when x.days_apart = 0 then 'the same business day'
      else x.days_apart || ' business day' || case when x.days_apart = 1 then '' else 's' end
        || ' apart; the lag allowed is ' || x.lag_days end),
  jsonb_build_object('check', 'merchant_user', 'passed', x.user_ok, 'detail',
    case when x.user_a is null or x.user_b is null then 'the merchant user is not known on both sides'
      when x.user_ok then 'the same merchant user' else 'different merchant users' end),
  jsonb_build_object('check', 'id', 'passed', x.id_ok, 'detail',
    case when x.id_distance is null then 'an id is too long to compare'
      when x.id_distance = 0 then 'the same merchant transaction id'
      when x.id_ok then 'merchant transaction ids ' || x.id_distance || ' character' ||
        case when x.id_distance = 1 then '' else 's' end || ' apart'
      else 'merchant transaction ids more than ${MAX_ID_DISTANCE} characters apart' end))`);

/**
 * The candidates among `candidatePairs` (candidate-pairs.ts `pairs`): at most MAX_CANDIDATES per
 * discrepancy, ranked by score (cand_new).
 */
export async function rankCandidates(ctx: RuleContext, candidatePairs: RawBuilder<unknown>): Promise<void> {
  await exec(
    ctx,
    sql`create temp table cand_new on commit drop as
      select discrepancy_id, business_date, rank::int, side, candidate_id, candidate_discrepancy_id, amount_cents,
        candidate_business_date, merchant_transaction_id, score, checks
      from (
        select x.*, ${CHECKS} as checks,
          row_number() over (partition by x.discrepancy_id
            order by x.score desc, x.days_apart, x.candidate_id) as rank
        from (
          select p.*, p.amount_diff <= p.amount_tolerance as amount_ok, p.days_apart <= p.lag_days as date_ok,
            coalesce(p.user_a = p.user_b, false) as user_ok, coalesce(p.id_distance <= ${MAX_ID_DISTANCE}, false) as id_ok,
            (case when p.amount_diff <= p.amount_tolerance then 40 else 0 end)
              + (case when p.id_distance <= ${MAX_ID_DISTANCE} then 30 - 5 * p.id_distance else 0 end)
              + (case when p.user_a = p.user_b then 20 else 0 end)
              + (case when p.days_apart <= p.lag_days then 10 else 0 end) - least(p.days_apart, 10)::int as score
          from (${candidatePairs}) p
        ) x
        where x.amount_ok or x.user_ok or x.id_ok
      ) ranked
      where rank <= ${MAX_CANDIDATES}`,
  );
}

/**
 * Writes what changed: drops the range's candidates (of the discrepancies `which`, as `m`) that
 * differ from cand_new, inserts the new ones.
 */
export async function storeCandidates(
  ctx: RuleContext,
  which: RawBuilder<unknown> = sql`true`,
): Promise<void> {
  const { from, to } = ctx;
  await exec(
    ctx,
    sql`delete from match_candidates m
      where m.business_date between ${from}::date and ${to}::date and ${which}
        and not exists (select 1 from cand_new n where n.discrepancy_id = m.discrepancy_id and n.side = m.side
          and n.candidate_id = m.candidate_id and (n.rank, n.candidate_discrepancy_id, n.amount_cents,
            n.candidate_business_date, n.merchant_transaction_id, n.score, n.checks)
          is not distinct from (m.rank, m.candidate_discrepancy_id, m.amount_cents, m.candidate_business_date,
            m.merchant_transaction_id, m.score, m.checks))`,
  );
  await exec(
    ctx,
    sql`insert into match_candidates (discrepancy_id, business_date, rank, side, candidate_id,
        candidate_discrepancy_id, amount_cents, candidate_business_date, merchant_transaction_id, score, checks, run_id)
      select n.discrepancy_id, n.business_date, n.rank, n.side, n.candidate_id, n.candidate_discrepancy_id,
        n.amount_cents, n.candidate_business_date, n.merchant_transaction_id, n.score, n.checks, ${ctx.runId}::bigint
      from cand_new n
      -- The candidates stored already, read once through the key's index before the insert writes:
      -- as a correlated 'not exists' the planner scanned match_candidates once per row, over the
      -- pages the insert had written so far (0.1 s for a first run's 2,600 candidates at 1,000,000 rows).
      where (n.discrepancy_id, n.side, n.candidate_id) not in (select m.discrepancy_id, m.side, m.candidate_id
        from match_candidates m where m.discrepancy_id = any (array(select discrepancy_id from cand_new)))`,
  );
}

/** The business-day ordinal of every date the pairs can meet (cand_days). */
export async function writeDays(ctx: RuleContext, days: number): Promise<void> {
  const span = businessDayOrdinals(
    addDays(ctx.from, -2 * days),
    addDays(ctx.to, 2 * days),
    ctx.settings.civicHoliday,
  );
  await exec(
    ctx,
    sql`create temp table cand_days on commit drop as
      select * from unnest(${span.dates}::date[], ${span.ordinals}::int[]) as t(day, ordinal)`,
  );
  await exec(ctx, sql`analyze cand_days`);
}

/**
 * Finds the candidates of the open missing_* discrepancies of the run's dates and stores them
 * (match_candidates), with the run's tolerances (ctx.tolerances). Run after the lifecycle
 * (reconcile/apply-findings.ts), in the run's account scope. Idempotent: a second run over the same
 * data writes nothing. Returns how many discrepancies have at least one candidate.
 */
export async function findCandidates(ctx: RuleContext): Promise<number> {
  const days = await searchItems(ctx);
  await rankCandidates(ctx, pairs(days));
  await storeCandidates(ctx);
  const r = await sql<{ n: number }>`select count(distinct discrepancy_id)::int as n from cand_new`.execute(
    ctx.trx,
  );
  return r.rows[0]!.n;
}

/**
 * The items a full run pairs (cand_items, indexed; cand_tolerance; cand_days), searched as far around
 * the run's dates as the largest date lag of their currencies needs: returns that many days.
 */
export async function searchItems(ctx: RuleContext): Promise<number> {
  await collectItems(ctx, searchDays(0));
  await tolerancesTable(ctx);
  const maxLag = await sql<{
    lag: number;
  }>`select coalesce(max(lag_days), 0)::int as lag from cand_tolerance`.execute(ctx.trx);
  const days = searchDays(maxLag.rows[0]!.lag);
  if (days !== searchDays(0)) {
    await exec(ctx, sql`drop table cand_items`);
    await collectItems(ctx, days);
  }
  await indexItems(ctx);
  await writeDays(ctx, days);
  return days;
}
