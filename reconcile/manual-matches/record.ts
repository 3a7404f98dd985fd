/**
 * Manual matches (issue 29, section 2; docs/finance.md, Manual matches): a person pairs provider
 * transactions with ledger entries, one to one, one to many or many to one, within one account and
 * one currency. The amounts must agree within the account's tolerance for the currency, or the
 * difference is written off by a person with the right to (reconcile/tolerances/, a write_offs row).
 * A match is stored with who, when, where from and a required note; each open discrepancy it closes
 * gets a `matched` event. Undo keeps the match and records who undid it and why (`match_undone`
 * events). Matching reads the items of matches that hold (reconcile/rules/manual-matches.ts); the
 * discrepancies resolve, or reopen after an undo, through the lifecycle of the next run of their dates
 * ({@link reconcileMatchDates}).
 *
 * One owner: the workbench, the API, `recon matches` and the bulk import all call these functions.
 */
import { sql, type Transaction } from 'kysely';
import type { Database } from '../../db/database.ts';
import { typedError } from '../../domain/errors.ts';
import { scopeCondition, type AccountScope } from '../discrepancies/filter.ts';
import { loadTolerances, recordWriteOff } from '../tolerances/index.ts';

/** A match its rules refuse (no note, both sides several, items of two currencies, amounts apart, ...). */
export class InvalidMatch extends typedError('final') {}

/** The match does not apply as things are now (an item already matched, the match already undone). */
export class MatchConflict extends typedError('final') {}

/** No manual match of the caller's accounts has this id. */
export class MatchNotFound extends typedError<{ readonly matchId: number }>('final') {
  constructor(matchId: number) {
    super(`manual match ${matchId} not found: recon matches list shows the matches`, { matchId });
  }
}

export const MATCH_ORIGINS = ['workbench', 'api', 'cli', 'import'] as const;
export type MatchOrigin = (typeof MATCH_ORIGINS)[number];

/** The most items on the "many" side of one match. */
export const MAX_ITEMS = 50;

export interface MatchRequest {
  readonly account: string;
  readonly providerTransactionIds: readonly string[];
  readonly ledgerMerchantTransactionIds: readonly string[];
  readonly note: string;
  /** The difference to write off, in cents (its absolute value); only when it exceeds the tolerance. */
  readonly writeOffCents?: number;
  readonly origin: MatchOrigin;
}

/** Who acts, which accounts they may act on, and whether they may write a difference off. */
export interface MatchActor {
  readonly name: string;
  readonly accounts?: AccountScope;
  readonly mayWriteOff: boolean;
}

export interface RecordedMatch {
  readonly matchId: number;
  readonly account: string;
  readonly currency: string;
  readonly providerAmountCents: number;
  readonly ledgerAmountCents: number;
  readonly differenceCents: number;
  readonly writtenOffCents: number;
  /** The first and last business dates of the items: the dates to reconcile again. */
  readonly from: string;
  readonly to: string;
}

interface Item {
  readonly side: 'provider' | 'ledger';
  readonly item_id: string;
  readonly amount_cents: number;
  readonly currency: string;
  readonly business_date: string;
}

type Trx = Transaction<Database>;

function checkShape(req: MatchRequest, actor: MatchActor): string {
  if (actor.name.trim() === '') throw new InvalidMatch('a manual match needs a name (by): say who');
  const note = req.note.trim();
  if (note === '') throw new InvalidMatch('a manual match needs a note: say why these items belong together');
  const p = req.providerTransactionIds;
  const l = req.ledgerMerchantTransactionIds;
  if (p.length === 0 || l.length === 0)
    throw new InvalidMatch(
      'a manual match pairs at least one provider transaction with at least one ledger entry',
    );
  if (p.length > 1 && l.length > 1)
    throw new InvalidMatch(
      `a manual match is one to one, one to many or many to one: ${p.length} provider transactions with ${l.length} ledger entries is neither; split it into several matches`,
    );
  if (p.length > MAX_ITEMS || l.length > MAX_ITEMS)
    throw new InvalidMatch(`a manual match has at most ${MAX_ITEMS} items on a side`);
  for (const [ids, what] of [
    [p, 'provider transaction'],
    [l, 'ledger entry'],
  ] as const) {
    if (new Set(ids).size !== ids.length) throw new InvalidMatch(`a ${what} is named twice in the match`);
    if (ids.some((id) => id.trim() === '' || id.length > 200))
      throw new InvalidMatch(`a ${what} id is empty or longer than 200 characters`);
  }
  if (
    actor.accounts !== undefined &&
    actor.accounts !== 'all' &&
    !actor.accounts.includes(req.account as never)
  )
    throw new InvalidMatch(`account ${req.account} is not one of yours: match items of your accounts`);
  return note;
}

/** The items as the warehouse holds them, or InvalidMatch naming the ids it does not hold. */
async function readItems(trx: Trx, req: MatchRequest): Promise<Item[]> {
  const r = await sql<Item>`
    select 'provider' as side, transaction_id as item_id, amount_cents,
      currency::text as currency, transaction_on::text as business_date
    from provider_transactions where account = ${req.account} and transaction_id = any(${[...req.providerTransactionIds]}::text[])
    union all
    select 'ledger', merchant_transaction_id, amount_cents, currency::text,
      ((booked_at at time zone 'America/Toronto')::date)::text
    from merchant_ledger where account = ${req.account}
      and merchant_transaction_id = any(${[...req.ledgerMerchantTransactionIds]}::text[])
    order by 1 desc, 2`.execute(trx);
  const items = r.rows.map((x) => ({ ...x, amount_cents: Number(x.amount_cents) }));
  const unknown = [
    ...req.providerTransactionIds
      .filter((id) => !items.some((i) => i.side === 'provider' && i.item_id === id))
      .map((id) => `provider transaction ${id}`),
    ...req.ledgerMerchantTransactionIds
      .filter((id) => !items.some((i) => i.side === 'ledger' && i.item_id === id))
      .map((id) => `ledger entry ${id}`),
  ];
  if (unknown.length > 0)
    throw new InvalidMatch(`account ${req.account} has no ${unknown.join(', ')}: check the ids`);
  const currencies = [...new Set(items.map((i) => i.currency))];
  if (currencies.length > 1)
    throw new InvalidMatch(
      `the items are in ${currencies.join(' and ')}: a manual match is within one currency`,
    );
  return items;
}

async function refuseMatched(trx: Trx, account: string, items: readonly Item[]): Promise<void> {
  const r = await sql<{ match_id: number; side: string; item_id: string }>`
    select match_id, side, item_id from manual_match_items
    where account = ${account} and undone_at is null
      and (side, item_id) in (select * from unnest(${items.map((i) => i.side)}::text[], ${items.map((i) => i.item_id)}::text[]))
    order by match_id`.execute(trx);
  if (r.rows.length > 0)
    throw new MatchConflict(
      r.rows
        .map(
          (x) =>
            `${x.side === 'provider' ? 'provider transaction' : 'ledger entry'} ${x.item_id} is in manual match ${x.match_id}`,
        )
        .join('; ') + ': undo that match first',
    );
}

/** The discrepancies a match of these items closes, or an undo reopens (a condition on discrepancies d). */
function relatedTo(providerIds: readonly string[], ledgerIds: readonly string[]) {
  return sql`((d.kind in ('missing_in_ledger','amount_mismatch','currency_mismatch','type_mismatch','status_mismatch')
      and d.transaction_id = any(${[...providerIds]}::text[]))
    or (d.kind = 'missing_at_provider' and d.merchant_transaction_id = any(${[...ledgerIds]}::text[])))`;
}

/**
 * Records a manual match in `trx` (the caller commits, then reconciles its dates: {@link
 * reconcileMatchDates}). Throws InvalidMatch (the request as given is refused), MatchConflict (an item
 * is in a match that holds) or the write-off's own error.
 */
export async function addManualMatch(trx: Trx, req: MatchRequest, actor: MatchActor): Promise<RecordedMatch> {
  const note = checkShape(req, actor);
  const items = await readItems(trx, req);
  await refuseMatched(trx, req.account, items);
  const currency = items[0]!.currency;
  const sum = (side: Item['side']) =>
    items.filter((i) => i.side === side).reduce((n, i) => n + i.amount_cents, 0);
  const providerAmount = sum('provider');
  const ledgerAmount = sum('ledger');
  const difference = ledgerAmount - providerAmount;
  const tolerance = (await loadTolerances(trx, req.account)).of(currency).amountCents;
  const writeOff = Math.abs(difference) > tolerance ? Math.abs(difference) : 0;
  if (writeOff > 0 && req.writeOffCents !== writeOff)
    throw new InvalidMatch(
      `the amounts differ by ${difference} cents ${currency} (provider ${providerAmount}, ledger ${ledgerAmount}); the tolerance is ${tolerance} cents: write off ${writeOff} cents (write_off_cents, by a person with the right to) or choose other items`,
    );
  if (writeOff === 0 && req.writeOffCents !== undefined && req.writeOffCents !== 0)
    throw new InvalidMatch(
      `the amounts agree within the tolerance (${difference} cents ${currency}): there is nothing to write off`,
    );
  if (writeOff > 0 && !actor.mayWriteOff)
    throw new InvalidMatch(
      `writing off ${writeOff} cents ${currency} needs the right to write off (role admin): ask someone who has it`,
    );
  const match = await trx
    .insertInto('manual_matches')
    .values({
      account: req.account,
      currency,
      provider_amount_cents: providerAmount,
      ledger_amount_cents: ledgerAmount,
      difference_cents: difference,
      written_off_cents: writeOff,
      note,
      matched_by: actor.name,
      origin: req.origin,
    })
    .returning(['match_id'])
    .executeTakeFirstOrThrow();
  const matchId = Number(match.match_id);
  await trx
    .insertInto('manual_match_items')
    .values(
      items.map((i) => ({
        match_id: matchId,
        account: req.account,
        side: i.side,
        item_id: i.item_id,
        amount_cents: i.amount_cents,
        business_date: i.business_date,
      })),
    )
    .execute();
  if (writeOff > 0)
    await recordWriteOff(trx, {
      account: req.account,
      currency,
      amountCents: difference,
      reason: `manual match ${matchId}: ${note}`,
      businessDate: items.map((i) => i.business_date).sort()[0]!,
      manualMatchId: matchId,
      writtenOffBy: actor.name,
    });
  await sql`insert into discrepancy_events (discrepancy_id, event, details, actor, account)
    select d.discrepancy_id, 'matched', jsonb_build_object('match_id', ${matchId}::bigint, 'note', ${note}::text,
      'provider_transaction_ids', ${JSON.stringify(req.providerTransactionIds)}::jsonb,
      'ledger_merchant_transaction_ids', ${JSON.stringify(req.ledgerMerchantTransactionIds)}::jsonb,
      'written_off_cents', ${writeOff}::bigint), ${actor.name}, d.account
    from discrepancies d where d.account = ${req.account} and d.resolved_at is null
      and ${relatedTo(req.providerTransactionIds, req.ledgerMerchantTransactionIds)}`.execute(trx);
  const dates = items.map((i) => i.business_date).sort();
  return {
    matchId,
    account: req.account,
    currency,
    providerAmountCents: providerAmount,
    ledgerAmountCents: ledgerAmount,
    differenceCents: difference,
    writtenOffCents: writeOff,
    from: dates[0]!,
    to: dates[dates.length - 1]!,
  };
}

/** The match's write-offs not yet reversed get their reversing rows (write_offs is insert-only). */
async function reverseWriteOffs(trx: Trx, matchId: number, reason: string, by: string): Promise<void> {
  const r = await sql<{
    write_off_id: number;
    account: string;
    currency: string;
    amount_cents: string;
    business_date: string | null;
  }>`
    select w.write_off_id, w.account, w.currency::text as currency, w.amount_cents::text as amount_cents,
      w.business_date::text as business_date
    from write_offs w where w.manual_match_id = ${matchId} and w.reversal_of is null
      and not exists (select 1 from write_offs r where r.reversal_of = w.write_off_id)`.execute(trx);
  for (const w of r.rows)
    await recordWriteOff(trx, {
      account: w.account,
      currency: w.currency,
      amountCents: -Number(w.amount_cents),
      reason,
      businessDate: w.business_date,
      manualMatchId: matchId,
      reversalOf: Number(w.write_off_id),
      writtenOffBy: by,
    });
}

/**
 * Undoes a manual match in `trx`: the match and its items are kept, marked undone by the actor with
 * the note; a write-off it made gets its reversing row; every discrepancy of its items gets a
 * `match_undone` event. Throws MatchNotFound (no such
 * match in the actor's accounts), MatchConflict (already undone) or InvalidMatch (no note).
 */
export async function undoManualMatch(
  trx: Trx,
  matchId: number,
  undoNote: string,
  actor: Omit<MatchActor, 'mayWriteOff'>,
): Promise<RecordedMatch> {
  const note = undoNote.trim();
  if (note === '') throw new InvalidMatch(`undoing manual match ${matchId} needs a note: say why`);
  if (actor.name.trim() === '') throw new InvalidMatch('undoing a manual match needs a name (by): say who');
  const m = (
    await sql<{
      account: string;
      currency: string;
      undone_at: string | null;
      p: string;
      l: string;
      d: string;
      w: string;
    }>`
      select account, currency::text as currency, undone_at::text, provider_amount_cents::text as p,
        ledger_amount_cents::text as l, difference_cents::text as d, written_off_cents::text as w
      from manual_matches where match_id = ${matchId} and ${scopeCondition(actor.accounts)} for update`.execute(
      trx,
    )
  ).rows[0];
  if (!m) throw new MatchNotFound(matchId);
  if (m.undone_at !== null)
    throw new MatchConflict(`manual match ${matchId} was already undone at ${m.undone_at}`);
  await sql`update manual_matches set undone_at = now(), undone_by = ${actor.name}, undo_note = ${note}
    where match_id = ${matchId}`.execute(trx);
  const items = await sql<{ side: string; item_id: string; business_date: string }>`
    update manual_match_items set undone_at = now() where match_id = ${matchId}
    returning side, item_id, business_date::text`.execute(trx);
  await reverseWriteOffs(trx, matchId, `undo of manual match ${matchId}: ${note}`, actor.name);
  const ids = (side: string) => items.rows.filter((i) => i.side === side).map((i) => i.item_id);
  await sql`insert into discrepancy_events (discrepancy_id, event, details, actor, account)
    select d.discrepancy_id, 'match_undone', jsonb_build_object('match_id', ${matchId}::bigint, 'note', ${note}::text),
      ${actor.name}, d.account
    from discrepancies d where d.account = ${m.account} and ${relatedTo(ids('provider'), ids('ledger'))}`.execute(
    trx,
  );
  const dates = items.rows.map((i) => i.business_date).sort();
  return {
    matchId,
    account: m.account,
    currency: m.currency,
    providerAmountCents: Number(m.p),
    ledgerAmountCents: Number(m.l),
    differenceCents: Number(m.d),
    writtenOffCents: Number(m.w),
    from: dates[0]!,
    to: dates[dates.length - 1]!,
  };
}
