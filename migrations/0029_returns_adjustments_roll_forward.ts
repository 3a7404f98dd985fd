import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * Returns and adjustments close the loop (issue 25, section 3):
 * - the ledger contract gains ADJUSTMENT entries (signed amount and fee: what the merchant booked for
 *   a provider adjustment of a transaction) and REPRESENTMENT entries (a returned payin the provider
 *   debits again on its next action date);
 * - provider_returns keeps the three dates the provider's sources give a return apart: the JSON
 *   report's reportDate, the CSV report's Settlement Date, and the legacy type 1 report's "last
 *   updated" date; returned_on stays the date the rules and grace periods use;
 * - returns stored before this migration get the date of the format that last loaded them
 *   (report_date, settlement_date or last_updated_on = returned_on) and the two others marked unknown,
 *   as a load does from now on: re-loading the report that stored one is then no restatement;
 * - `settlement_items` lists every amount of the settlement roll-forward, provider and ledger side,
 *   paired; `daily_settlement_totals` (the same name as before, for analysts' queries) becomes the
 *   roll-forward per account, Eastern business day and currency: payins, payouts, fees, returns,
 *   representments and adjustments on each side, both nets, their difference, how much of it the
 *   open discrepancies explain and the remainder nothing explains.
 */

const LEDGER_TYPES = `('DEBIT','CREDIT','RETURN','ADJUSTMENT','REPRESENTMENT')`;

const RETURN_DATES: [string, string][] = [
  [
    'report_date',
    'JSON report reportDate (yyyy-MM-dd), as given; null when no JSON report carried this return.',
  ],
  ['settlement_date', 'CSV report Settlement Date, as given; null when no CSV report carried this return.'],
  [
    'last_updated_on',
    'Legacy query type 1, field 1: the date the return was last updated (it moves when the return changes); null when no legacy report carried it.',
  ],
];

/** Eastern business date of a ledger booking . */
const EASTERN_DATE = (column: string) => `(${column} at time zone 'America/Toronto')::date`;
const BOOKED_ON = EASTERN_DATE('l.booked_at');

/** The type of a return, from the return itself or else its original (the provider transaction it returns). */
const RETURN_COMPONENT = `case coalesce(case when r.original_transaction_type in ('DEBIT','CREDIT') then r.original_transaction_type end,
    o.transaction_type)
  when 'DEBIT' then 'return' when 'CREDIT' then 'payout_return' else 'unknown_type' end`;

const LEDGER_PAYMENT = `l.transaction_type in ('DEBIT','CREDIT') and l.status = 'SUCCESSFUL'`;
const LEDGER_RETURN = `l.transaction_type = 'RETURN' and l.status not in ('REJECTED','FAILED')`;
const LEDGER_REPRESENTMENT = `l.transaction_type = 'REPRESENTMENT' and l.status = 'SUCCESSFUL'`;

/** A ledger payin or payout's columns after pair_key (tm and p may be null). */
const LEDGER_PAYMENT_COLUMNS = `'ledger',
    case when tm.transaction_id is not null and p.transaction_type is null then 'unknown_type'
         when l.transaction_type = 'CREDIT' then 'payout' else 'payin' end,
    l.amount_cents, coalesce(l.fee_cents, case when p.status = 'SUCCESSFUL' then p.fee_cents end, 0)::bigint,
    null, l.merchant_transaction_id, null, null, coalesce(p.status = 'PENDING', false)`;

/** A ledger RETURN's columns after pair_key, with its component. */
const LEDGER_RETURN_COLUMNS = (component: string) => `'ledger', ${component},
    l.amount_cents, 0::bigint, null, l.merchant_transaction_id, null, null, false`;

/** A ledger REPRESENTMENT's columns after pair_key (p may be null). */
const LEDGER_REPRESENTMENT_COLUMNS = `'ledger', 'representment',
    l.amount_cents, coalesce(l.fee_cents, p.fee_cents, 0)::bigint, null, l.merchant_transaction_id, null, null, false`;

/**
 * One row per amount of the roll-forward. Items of one `pair_key` are the two sides of one movement
 * (a provider transaction and the ledger entry it claims, a return and its booking) and share its
 * date; an item nothing pairs is a pair of its own. A ledger REPRESENTMENT pairs with the re-debit its
 * transaction_id names; ledger ADJUSTMENT entries pair with nothing (adjustment_not_booked judges the
 * provider's adjustments; a ledger adjustment the provider never made is left to the remainder). Only
 * the id that a discrepancy names an item by is filled: transaction_id (provider transactions),
 * merchant_transaction_id (ledger entries), return_transaction_id (provider returns), adjustment_key
 * (provider adjustments).
 *
 * Each branch's business_date is one indexed column or expression of the table it starts from, so
 * that a filter on business_date (the settlement_unexplained rule reads one window's days) is an
 * index range scan in every branch: a ledger entry paired with a provider row is reached from that
 * row (its date is the row's), one paired with nothing from its own Eastern booking date
 * (merchant_ledger_booked_on_idx).
 */
const ITEMS = `
  select p.account, p.transaction_on as business_date, p.currency::text as currency,
    'T:' || p.transaction_id as pair_key, 'provider' as side,
    case when p.transaction_type is null then 'unknown_type'
         when p.transaction_type = 'CREDIT' then 'payout'
         when exists (select 1 from provider_transactions o
                      join provider_returns r on r.account = o.account and r.original_transaction_id = o.transaction_id
                      where o.account = p.account and o.merchant_transaction_id = p.merchant_transaction_id
                        and o.transaction_id <> p.transaction_id and r.returned_on <= p.transaction_on)
           then 'representment'
         else 'payin' end as component,
    p.amount_cents, coalesce(p.fee_cents, 0)::bigint as fee_cents,
    p.transaction_id, null::text as merchant_transaction_id, null::text as return_transaction_id,
    null::text as adjustment_key, false as in_flight
  from provider_transactions p where p.status = 'SUCCESSFUL'
  union all
  select l.account, p.transaction_on, l.currency::text, 'T:' || p.transaction_id, ${LEDGER_PAYMENT_COLUMNS}
  from provider_transactions p
    join transaction_matches tm on tm.account = p.account and tm.transaction_id = p.transaction_id
    join merchant_ledger l on l.account = tm.account and l.merchant_transaction_id = tm.merchant_transaction_id
  where ${LEDGER_PAYMENT}
  union all
  select l.account, ${BOOKED_ON}, l.currency::text, coalesce('T:' || tm.transaction_id, 'L:' || l.merchant_transaction_id),
    ${LEDGER_PAYMENT_COLUMNS}
  from merchant_ledger l
    left join transaction_matches tm on tm.account = l.account and tm.merchant_transaction_id = l.merchant_transaction_id
    left join provider_transactions p on p.account = tm.account and p.transaction_id = tm.transaction_id
  where ${LEDGER_PAYMENT} and p.transaction_id is null
  union all
  select r.account, r.returned_on, r.currency::text, 'R:' || r.return_transaction_id, 'provider', ${RETURN_COMPONENT},
    r.amount_cents, 0::bigint, null, null, r.return_transaction_id, null, false
  from provider_returns r
    left join provider_transactions o on o.account = r.account and o.transaction_id = r.original_transaction_id
  where r.returned_on is not null
  union all
  select l.account, r.returned_on, l.currency::text, 'R:' || r.return_transaction_id, ${LEDGER_RETURN_COLUMNS(RETURN_COMPONENT)}
  from provider_returns r
    join return_matches m on m.account = r.account and m.return_transaction_id = r.return_transaction_id
    join merchant_ledger l on l.account = m.account and l.merchant_transaction_id = m.ledger_merchant_transaction_id
    left join provider_transactions o on o.account = r.account and o.transaction_id = r.original_transaction_id
  where ${LEDGER_RETURN} and r.returned_on is not null
  union all
  select l.account, ${BOOKED_ON}, l.currency::text, 'L:' || l.merchant_transaction_id,
    ${LEDGER_RETURN_COLUMNS(`case when lo.transaction_type = 'CREDIT' then 'payout_return' else 'return' end`)}
  from merchant_ledger l
    left join merchant_ledger lo on lo.account = l.account and lo.merchant_transaction_id = l.original_merchant_transaction_id
  where ${LEDGER_RETURN} and not exists (select 1 from return_matches m
      join provider_returns r on r.account = m.account and r.return_transaction_id = m.return_transaction_id
      where m.account = l.account and m.ledger_merchant_transaction_id = l.merchant_transaction_id
        and r.returned_on is not null)
  union all
  select a.account, a.adjusted_on, a.currency::text, 'A:' || a.adjustment_key, 'provider', 'adjustment',
    a.amount_cents, coalesce(a.fee_cents, 0)::bigint, null, null, null, a.adjustment_key, false
  from provider_adjustments a
  union all
  select l.account, ${BOOKED_ON}, l.currency::text, 'L:' || l.merchant_transaction_id, 'ledger', 'adjustment',
    l.amount_cents, coalesce(l.fee_cents, 0)::bigint, null, l.merchant_transaction_id, null, null, false
  from merchant_ledger l
  where l.transaction_type = 'ADJUSTMENT' and l.status not in ('REJECTED','FAILED')
  union all
  select l.account, p.transaction_on, l.currency::text, 'T:' || p.transaction_id, ${LEDGER_REPRESENTMENT_COLUMNS}
  from provider_transactions p
    join merchant_ledger l on l.account = p.account and l.transaction_id = p.transaction_id
  where ${LEDGER_REPRESENTMENT} and p.status = 'SUCCESSFUL'
  union all
  select l.account, ${BOOKED_ON}, l.currency::text, 'L:' || l.merchant_transaction_id, ${LEDGER_REPRESENTMENT_COLUMNS}
  from merchant_ledger l
    left join provider_transactions p on p.account = l.account and p.transaction_id = l.transaction_id
      and p.status = 'SUCCESSFUL'
  where ${LEDGER_REPRESENTMENT} and p.transaction_id is null`;

/** What an item adds to its side's net, in cents of its currency. */
const NET = `case component
    when 'payin' then amount_cents - fee_cents when 'representment' then amount_cents - fee_cents
    when 'payout' then -amount_cents - fee_cents when 'return' then -amount_cents
    when 'payout_return' then amount_cents when 'adjustment' then amount_cents - fee_cents else 0 end`;

const ITEM_COMMENTS: Record<string, string> = {
  account: 'Provider account of the item.',
  business_date:
    "Eastern business date the item counts on: a provider transaction's transaction_on, a return's returned_on, an adjustment's adjusted_on; a ledger entry takes the date of the provider row it is paired with, else its own booking date (Eastern).",
  currency: 'ISO 4217 currency of the item (a ledger entry in its own currency).',
  pair_key:
    'The movement the item belongs to: T:<transaction_id> (a provider transaction and the ledger entry it claims), R:<return_transaction_id> (a return and its booking), A:<adjustment_key> (a provider adjustment), L:<merchant_transaction_id> (a ledger entry nothing pairs).',
  side: 'provider or ledger.',
  component:
    'payin, payout, representment (a payin debited again after its return), return (of a payin), payout_return, adjustment, or unknown_type (a row whose transaction type the provider does not document, e.g. legacy rows: left out of both nets).',
  amount_cents: 'Amount in cents, as reported or booked (adjustments signed).',
  fee_cents:
    "Fee in cents: the provider's for a provider item; a ledger entry's own, or when it books none the fee of the provider transaction it is paired with.",
  net_cents:
    "What the item adds to its side's net: payins and representments +amount-fee, payouts -amount-fee, returns of payins -amount, returns of payouts +amount, adjustments amount-fee, unknown_type 0.",
  transaction_id: 'Provider transaction ID (provider transactions only).',
  merchant_transaction_id: 'Merchant transaction ID of the ledger entry (ledger items only).',
  return_transaction_id: 'Return transaction ID (provider returns only).',
  adjustment_key: 'Key of the provider adjustment (provider adjustments only).',
  in_flight:
    'A ledger entry whose provider transaction is still PENDING: money in flight, not a difference yet (its movement counts as explained until the provider reports it final; stuck_pending judges how long that takes).',
};

/**
 * Whether an open discrepancy of the item's day names the item (i): by the id it is named by, see
 * ITEMS. A day's difference is explained by the open discrepancies of that day, and by the manual
 * matches that hold (0025): a person paired the item, as the discrepancies the match closed
 * explained it (reconcile/rules/settlement.ts counts the same).
 */
const OPEN_OF_DAY = `d.account = i.account and d.business_date = i.business_date and d.resolved_at is null`;
const DISPUTED = `(
  exists (select 1 from discrepancies d where ${OPEN_OF_DAY}
          and d.transaction_id = i.transaction_id and d.return_transaction_id is null)
  or exists (select 1 from discrepancies d where ${OPEN_OF_DAY}
          and d.merchant_transaction_id = i.merchant_transaction_id)
  or exists (select 1 from discrepancies d where ${OPEN_OF_DAY}
          and d.return_transaction_id = i.return_transaction_id)
  or exists (select 1 from discrepancies d where ${OPEN_OF_DAY}
          and d.discrepancy_key = 'adjustment_not_booked:' || i.adjustment_key)
  or exists (select 1 from manual_match_items mm where mm.account = i.account and mm.side = 'provider'
          and mm.item_id = i.transaction_id and mm.undone_at is null)
  or exists (select 1 from manual_match_items mm where mm.account = i.account and mm.side = 'ledger'
          and mm.item_id = i.merchant_transaction_id and mm.undone_at is null))`;

const sumOf = (side: string, component: string, expr = 'amount_cents') =>
  `coalesce(sum(${expr}) filter (where side = '${side}' and component in (${component})), 0)::bigint`;

function sideColumns(side: 'provider' | 'ledger'): string {
  return `${sumOf(side, "'payin'")} as ${side}_payins_cents,
    ${sumOf(side, "'payout'")} as ${side}_payouts_cents,
    ${sumOf(side, "'payin','payout','representment','adjustment'", 'fee_cents')} as ${side}_fees_cents,
    (${sumOf(side, "'return'")} - ${sumOf(side, "'payout_return'")}) as ${side}_returns_cents,
    ${sumOf(side, "'representment'")} as ${side}_representments_cents,
    ${sumOf(side, "'adjustment'")} as ${side}_adjustments_cents,
    coalesce(sum(net_cents) filter (where side = '${side}'), 0)::bigint as ${side}_net_cents`;
}

const signedNet = `case when side = 'provider' then net_cents else -net_cents end`;

const TOTALS = `select account, business_date, currency,
    ${sideColumns('provider')},
    ${sideColumns('ledger')},
    coalesce(sum(${signedNet}), 0)::bigint as difference_cents,
    coalesce(sum(${signedNet}) filter (where pair_disputed), 0)::bigint as explained_cents,
    coalesce(sum(${signedNet}) filter (where not pair_disputed), 0)::bigint as unexplained_cents,
    count(distinct pair_key) filter (where pair_disputed)::int as disputed_pairs,
    count(*) filter (where side = 'provider' and component = 'unknown_type')::int as unknown_type_count,
    ${sumOf('provider', "'unknown_type'")} as unknown_type_amount_cents
  from (select i.*, bool_or(i.disputed or i.in_flight) over (partition by i.account, i.business_date, i.pair_key) as pair_disputed
        from (select i.*, ${DISPUTED} as disputed from settlement_items i) i) x
  group by account, business_date, currency`;

const TOTALS_COMMENTS: Record<string, string> = {
  account: 'Provider account.',
  business_date: 'Eastern business date (see settlement_items.business_date).',
  currency: 'ISO 4217 currency: every figure of the row is in it.',
  difference_cents: 'provider_net_cents - ledger_net_cents.',
  explained_cents:
    'The part of the difference made of movements an open discrepancy of the day names (either side of the pair), that a person matched by hand (an item of a manual match that holds, manual_match_items), or still in flight (settlement_items.in_flight): the open discrepancies of the day explain it.',
  unexplained_cents:
    'difference_cents - explained_cents: money nothing explains. Not 0 once the grace period has run out, it is the discrepancy settlement_unexplained of that day and currency.',
  disputed_pairs: 'Movements (pairs) of the row that an open discrepancy of the day names.',
  unknown_type_count:
    'Successful provider transactions and returns whose transaction type the provider does not document (legacy rows): left out of both nets, with the ledger entries paired with them.',
  unknown_type_amount_cents: 'Their amount in cents.',
};
for (const side of ['provider', 'ledger'] as const) {
  const who = side === 'provider' ? "the provider's reports" : "the merchant's ledger";
  Object.assign(TOTALS_COMMENTS, {
    [`${side}_payins_cents`]: `Successful payins (DEBIT) in ${who}, representments left out.`,
    [`${side}_payouts_cents`]: `Successful payouts (CREDIT) in ${who}.`,
    [`${side}_fees_cents`]: `Fees of payins, payouts, representments and adjustments in ${who}.`,
    [`${side}_returns_cents`]: `Returns of payins minus returns of payouts in ${who}.`,
    [`${side}_representments_cents`]: `Payins debited again after their return (RETURNED_WITH_REPRESENTMENT) in ${who}.`,
    [`${side}_adjustments_cents`]: `Adjustment amounts (signed) in ${who}; their fees are in ${side}_fees_cents.`,
    [`${side}_net_cents`]: `Net of ${who}: payins - payouts - fees - returns + representments + adjustments.`,
  });
}

/** The business date of each kind, which is also the date its grace period (business days) counts from. */
const BUSINESS_DATE_COMMENT =
  'Eastern business date the problem belongs to. For the kinds with a grace period (graceBusinessDays, business days; docs/finance.md) it is the date the grace period counts from: ' +
  'missing_at_provider, the Eastern date of the ledger booking (merchant_ledger.booked_at); ' +
  'return_not_booked and return_notification_missing, provider_returns.returned_on; ' +
  'return_not_reported, the Eastern date the return notification was received (notifications.received_at); ' +
  'representment_missed, provider_returns.next_action_date; ' +
  'adjustment_not_booked, provider_adjustments.adjusted_on; ' +
  'settlement_unexplained, the day of the roll-forward (daily_settlement_totals.business_date). ' +
  "The other kinds, with no grace period, take the provider row's date: missing_in_ledger, amount_mismatch, currency_mismatch, type_mismatch, status_mismatch, fee_mismatch, " +
  'notification_missing, notification_late, notification_undelivered, notification_mismatch, duplicate_merchant_transaction, source_conflict.';

const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;
const VISIBLE = (col: string) => `public.account_visible(${col}, current_user)`;

/** The bit of `column` in provider_returns.unknown_mask (0014: a column a format does not carry). */
const BIT = (column: string) =>
  sql`(1::bigint << (select attnum from pg_attribute
    where attrelid = 'provider_returns'::regclass and attname = ${column}))`;
const ALL_DATES = sql`(${BIT('report_date')} | ${BIT('settlement_date')} | ${BIT('last_updated_on')})`;

/**
 * The returns stored before the three dates existed: the date of the format that last loaded each
 * becomes returned_on (JSON reportDate, CSV Settlement Date, legacy field 1) and the two other dates
 * are marked unknown, as every load stores them from now on.
 */
async function backfillReturnDates(db: Kysely<any>): Promise<void> {
  await sql`update provider_returns r
    set report_date = case when f.format = 'report-json' then r.returned_on end,
      settlement_date = case when f.format = 'report-csv' then r.returned_on end,
      last_updated_on = case when f.format = 'legacy' then r.returned_on end,
      unknown_mask = coalesce(r.unknown_mask, 0) & ~${ALL_DATES}
        | case when f.format = 'report-json' then 0 else ${BIT('report_date')} end
        | case when f.format = 'report-csv' then 0 else ${BIT('settlement_date')} end
        | case when f.format = 'legacy' then 0 else ${BIT('last_updated_on')} end
    from loads f
    where f.load_id = r.load_id
      and r.report_date is null and r.settlement_date is null and r.last_updated_on is null
      and (r.returned_on is not null or coalesce(r.unknown_mask, 0) & ${ALL_DATES} = 0)`.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table merchant_ledger drop constraint if exists merchant_ledger_transaction_type_check,
    add constraint merchant_ledger_transaction_type_check check (transaction_type in ${sql.raw(LEDGER_TYPES)})`.execute(
    db,
  );
  await sql`alter table merchant_ledger drop constraint if exists merchant_ledger_amount_cents_check,
    add constraint merchant_ledger_amount_cents_check check (amount_cents >= 0 or transaction_type = 'ADJUSTMENT')`.execute(
    db,
  );
  await sql`comment on column merchant_ledger.transaction_type is ${sql.lit(
    'DEBIT (payin), CREDIT (payout), RETURN (a return, with original_merchant_transaction_id), ADJUSTMENT (an adjustment of the provider transaction named in transaction_id: amount_cents and fee_cents signed, as the provider reports them) or REPRESENTMENT (a returned payin debited again, with original_merchant_transaction_id).',
  )}`.execute(db);
  await sql`comment on column merchant_ledger.amount_cents is ${sql.lit(
    'Amount in cents; never negative, except for an ADJUSTMENT, signed as the provider adjustment it books.',
  )}`.execute(db);

  // settlement_items' ledger entries paired with nothing count on their Eastern booking date: the
  // roll-forward of a window (settlement_unexplained) reads them by that date.
  await sql
    .raw(`create index merchant_ledger_booked_on_idx on merchant_ledger ((${EASTERN_DATE('booked_at')}))`)
    .execute(db);
  // adjustment_not_booked counts the ledger's ADJUSTMENT entries of an adjustment's transaction id, or
  // of none (is null), and settlement_items pairs a re-debit with the REPRESENTMENT entry naming it:
  // probes of these few entries by account and transaction id, never of the account's whole ledger.
  await sql`create index merchant_ledger_adjustment_txn_idx on merchant_ledger (account, transaction_id)
    where transaction_type in ('ADJUSTMENT','REPRESENTMENT')`.execute(db);
  // settlement_items asks of each payin whether its merchant transaction id was returned before: a
  // probe by account and original transaction id (0010 put account first in the other lookups).
  await sql`drop index provider_returns_original_idx`.execute(db);
  await sql`create index provider_returns_original_idx on provider_returns (account, original_transaction_id)`.execute(
    db,
  );
  // representment_missed reads the returns whose next action date falls in the run's window.
  await sql`create index provider_returns_next_action_idx on provider_returns (account, next_action_date)
    where next_action_date is not null`.execute(db);

  for (const [column, comment] of RETURN_DATES) {
    await sql.raw(`alter table provider_returns add column ${column} date`).execute(db);
    await sql.raw(`comment on column provider_returns.${column} is ${lit(comment)}`).execute(db);
  }
  await backfillReturnDates(db);
  await sql`comment on column provider_returns.returned_on is ${sql.lit(
    'Date of the return, the one the rules and their grace periods use (return_not_booked, return_notification_missing, the roll-forward): the date of the report that last carried the return (JSON reportDate, CSV Settlement Date, or legacy field 1, the last-updated date); report_date, settlement_date and last_updated_on keep each apart.',
  )}`.execute(db);
  await sql`comment on column discrepancies.business_date is ${sql.lit(BUSINESS_DATE_COMMENT)}`.execute(db);
  await sql`do $$
    begin
      if exists (select from pg_roles where rolname = 'recon_analyst')
         and has_any_column_privilege('recon_analyst', 'provider_returns', 'select') then
        grant select (report_date, settlement_date, last_updated_on) on provider_returns to recon_analyst;
      end if;
    end $$`.execute(db);

  await sql
    .raw(
      `create view settlement_items with (security_barrier) as
       select account, business_date, currency, pair_key, side, component, amount_cents, fee_cents,
         (${NET})::bigint as net_cents, transaction_id, merchant_transaction_id, return_transaction_id, adjustment_key,
         in_flight
       from (${ITEMS}) i where ${VISIBLE('account')}`,
    )
    .execute(db);
  await sql`comment on view settlement_items is ${sql.lit(
    'Every amount of the settlement roll-forward (daily_settlement_totals), one row per provider transaction, return, adjustment and ledger entry that moves money, with the movement (pair) it belongs to.',
  )}`.execute(db);
  for (const [column, comment] of Object.entries(ITEM_COMMENTS)) {
    await sql.raw(`comment on column settlement_items.${column} is ${lit(comment)}`).execute(db);
  }

  await sql`drop view daily_settlement_totals`.execute(db);
  await sql.raw(`create view daily_settlement_totals with (security_barrier) as ${TOTALS}`).execute(db);
  await sql`comment on view daily_settlement_totals is ${sql.lit(
    "The settlement roll-forward per account, Eastern business date and currency: what the provider's reports and the merchant's ledger each moved (payins, payouts, fees, returns, representments, adjustments), both nets, their difference, the part the open discrepancies explain and the remainder nothing explains. The figures finance checks against the bank statement.",
  )}`.execute(db);
  for (const [column, comment] of Object.entries(TOTALS_COMMENTS)) {
    await sql.raw(`comment on column daily_settlement_totals.${column} is ${lit(comment)}`).execute(db);
  }
  await sql`do $$
    begin
      if exists (select from pg_roles where rolname = 'recon_analyst') then
        grant select on settlement_items, daily_settlement_totals to recon_analyst;
      end if;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`comment on column discrepancies.business_date is ${sql.lit('Eastern business date the problem belongs to.')}`.execute(
    db,
  );
  await sql`drop view daily_settlement_totals`.execute(db);
  await sql`drop view settlement_items`.execute(db);
  await sql
    .raw(
      `create view daily_settlement_totals with (security_barrier) as
       select transaction_on as business_date, currency, transaction_type,
         count(*) as transactions, sum(amount_cents)::bigint as amount_cents,
         coalesce(sum(fee_cents), 0)::bigint as fee_cents,
         (case when transaction_type = 'CREDIT' then -sum(amount_cents)
               when transaction_type = 'DEBIT' then sum(amount_cents) else null end
           - coalesce(sum(fee_cents), 0))::bigint as net_cents,
         case when transaction_type in ('DEBIT','CREDIT') then 0::bigint else count(*) end as unknown_type_count,
         (case when transaction_type in ('DEBIT','CREDIT') then 0 else sum(amount_cents) end)::bigint
           as unknown_type_amount_cents,
         account
       from provider_transactions
       where status = 'SUCCESSFUL' and ${VISIBLE('account')}
       group by account, transaction_on, currency, transaction_type`,
    )
    .execute(db);
  for (const [column] of RETURN_DATES) {
    await sql.raw(`alter table provider_returns drop column ${column}`).execute(db);
  }
  await sql`drop index provider_returns_original_idx`.execute(db);
  await sql`create index provider_returns_original_idx on provider_returns (original_transaction_id)`.execute(
    db,
  );
  await sql`drop index merchant_ledger_booked_on_idx, merchant_ledger_adjustment_txn_idx, provider_returns_next_action_idx`.execute(
    db,
  );
  await sql`alter table merchant_ledger drop constraint merchant_ledger_amount_cents_check,
    add constraint merchant_ledger_amount_cents_check check (amount_cents >= 0)`.execute(db);
  await sql`alter table merchant_ledger drop constraint merchant_ledger_transaction_type_check,
    add constraint merchant_ledger_transaction_type_check check (transaction_type in ('DEBIT','CREDIT','RETURN'))`.execute(
    db,
  );
}
