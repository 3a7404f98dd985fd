import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * A full run reads its settlement items with one pass over the ledger's payments (issue 30, section 2).
 *
 * settlement_items lists a ledger payin or payout in one of two branches: paired (provider ⋈ claim ⋈
 * ledger, dated by the provider row, reached from the provider's dates) or paired with nothing
 * (ledger ⟕ claim ⟕ provider, an anti join, dated by the Eastern booking day, reached from the
 * ledger's). Each branch reads its date from an indexed column, so that a few days or a few keys are
 * index scans; but a first run reads every item of its range, and then both branches hash the whole
 * ledger, claims and provider tables: twice the work, the second for a few thousand unpaired entries.
 *
 * Both branches are now one view, recon_work.settlement_ledger_payments (ledger ⟕ claim ⟕ provider:
 * each entry once, with both dates and the provider row it pairs with, if any), and
 * settlement_items takes its paired entries (`paired_transaction_id is not null`: the planner
 * reduces the left joins to the inner joins of before) and its unpaired ones (`is null`: the anti
 * join of before) from it, with the same plans for a few days or keys. Its other nine branches are
 * recon_work.settlement_other_items, as they were. recon_work.settlement_range_items is the same
 * items with each ledger payment read once, dated by the provider row if paired and by its booking
 * day if not, and without the per-row visibility test: for reading a range of days whole (a full
 * run's roll-forward, reconcile/rules/settlement.ts, which tests once whether the pipeline sees the
 * run's account). Its date is then a computed expression, so a few days would read the whole
 * ledger: runs over changed keys read settlement_items.
 *
 * The same rows: every ledger payment has at most one claim (transaction_matches is unique on the
 * ledger side) and at most one provider row for it (the provider's primary key), so the left joins
 * give each entry once, paired exactly when the provider row exists, and each column is the same
 * expression of the same joined row as in the branch it came from (the pair key 'T:' || the claim's
 * transaction id is the provider row's when that row exists).
 *
 * settlement_items is rewritten from its own definition (0034, 0037: its columns, comments, the
 * security barrier and the views over it, daily_settlement_totals, stay).
 */

const OTHER = 'recon_work.settlement_other_items';
const PAYMENTS = 'recon_work.settlement_ledger_payments';
const RANGE = 'recon_work.settlement_range_items';

const COLUMNS = `currency, pair_key, side, component, amount_cents, fee_cents, transaction_id,
    merchant_transaction_id, return_transaction_id, adjustment_key, in_flight`;

/** The ledger's payins and payouts, each once, with the provider row its claim names (if any). */
const LEDGER_PAYMENTS = `select l.account, p.transaction_on as paired_on,
    (l.booked_at at time zone 'America/Toronto')::date as booked_on, p.transaction_id as paired_transaction_id,
    l.currency::text as currency, coalesce('T:' || tm.transaction_id, 'L:' || l.merchant_transaction_id) as pair_key,
    'ledger'::text as side,
    case when tm.transaction_id is not null and p.transaction_type is null then 'unknown_type'
         when l.transaction_type = 'CREDIT' then 'payout' else 'payin' end as component,
    l.amount_cents, coalesce(l.fee_cents, case when p.status = 'SUCCESSFUL' then p.fee_cents end, 0)::bigint as fee_cents,
    null::text as transaction_id, l.merchant_transaction_id, null::text as return_transaction_id,
    null::text as adjustment_key, coalesce(p.status = 'PENDING', false) as in_flight
  from merchant_ledger l
    left join transaction_matches tm on tm.account = l.account and tm.merchant_transaction_id = l.merchant_transaction_id
    left join provider_transactions p on p.account = tm.account and p.transaction_id = tm.transaction_id
  where l.transaction_type in ('DEBIT','CREDIT') and l.status = 'SUCCESSFUL'`;

const PAIRED = `select account, paired_on, ${COLUMNS} from ${PAYMENTS} where paired_transaction_id is not null`;
const UNPAIRED = `select account, booked_on, ${COLUMNS} from ${PAYMENTS} where paired_transaction_id is null`;
const ONCE = `select account, case when paired_transaction_id is not null then paired_on else booked_on end,
    ${COLUMNS} from ${PAYMENTS}`;

/** 0029's two ledger payment branches, as settlement_items held them before (for `down`). */
const PAYMENT_COLUMNS = `'ledger',
    case when tm.transaction_id is not null and p.transaction_type is null then 'unknown_type'
         when l.transaction_type = 'CREDIT' then 'payout' else 'payin' end,
    l.amount_cents, coalesce(l.fee_cents, case when p.status = 'SUCCESSFUL' then p.fee_cents end, 0)::bigint,
    null, l.merchant_transaction_id, null, null, coalesce(p.status = 'PENDING', false)`;
const PAYMENT = `l.transaction_type in ('DEBIT','CREDIT') and l.status = 'SUCCESSFUL'`;
const OLD_PAIRED = `select l.account, p.transaction_on, l.currency::text, 'T:' || p.transaction_id, ${PAYMENT_COLUMNS}
  from provider_transactions p
    join transaction_matches tm on tm.account = p.account and tm.transaction_id = p.transaction_id
    join merchant_ledger l on l.account = tm.account and l.merchant_transaction_id = tm.merchant_transaction_id
  where ${PAYMENT}`;
const OLD_UNPAIRED = `select l.account, (l.booked_at at time zone 'America/Toronto')::date, l.currency::text,
    coalesce('T:' || tm.transaction_id, 'L:' || l.merchant_transaction_id), ${PAYMENT_COLUMNS}
  from merchant_ledger l
    left join transaction_matches tm on tm.account = l.account and tm.merchant_transaction_id = l.merchant_transaction_id
    left join provider_transactions p on p.account = tm.account and p.transaction_id = tm.transaction_id
  where ${PAYMENT} and p.transaction_id is null`;

/** Where the item union begins and ends in pg_get_viewdef's text of settlement_items. */
const UNION_START = 'FROM ( ';
const UNION_END = ') i\n  WHERE ';

/** settlement_items' definition cut in three: its outer select, its item branches, its condition. */
async function viewParts(db: Kysely<any>, view: string) {
  const r = await sql<{ def: string }>`select pg_get_viewdef(${view}::regclass) as def`.execute(db);
  const def = r.rows[0]!.def.replace(/;\s*$/, '');
  const start = def.indexOf(UNION_START);
  const end = def.lastIndexOf(UNION_END);
  if (start < 0 || end < start)
    throw new Error(
      `${view} is not a select over a union of items with a condition: its definition changed since migration 0043 was written; adapt the migration to it`,
    );
  return {
    head: def.slice(0, start + UNION_START.length),
    branches: def.slice(start + UNION_START.length, end).split(/\s+UNION ALL\s+/),
    tail: def.slice(end),
  };
}

const comment = (view: string, text: string) =>
  sql.raw(`comment on view ${view} is '[pipeline only] ${text.replace(/'/g, "''")}'`);

async function replaceItems(db: Kysely<any>, head: string, branches: string[], tail: string): Promise<void> {
  await sql
    .raw(
      `create or replace view public.settlement_items with (security_barrier) as ${head}${branches.join('\n  union all\n  ')}\n  ${tail}`,
    )
    .execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  const { head, branches, tail } = await viewParts(db, 'public.settlement_items');
  // 0029's order, as 0037 left it: the provider's two branches, then the ledger's paired and unpaired payments.
  const payments = branches.slice(2, 4);
  if (branches.length !== 11 || !payments.every((b) => b.includes('JOIN transaction_matches tm')))
    throw new Error(
      "settlement_items' third and fourth branches are not the ledger's payments migration 0043 was written for: its definition changed; adapt the migration to it",
    );
  await sql.raw(`create view ${PAYMENTS} as ${LEDGER_PAYMENTS}`).execute(db);
  await sql
    .raw(
      `create view ${OTHER} as ${[...branches.slice(0, 2), ...branches.slice(4)].join('\n  union all\n  ')}`,
    )
    .execute(db);
  await replaceItems(db, head, [`select * from ${OTHER}`, PAIRED, UNPAIRED], tail);
  // The outer select of settlement_items (net_cents) over the union, without its condition.
  await sql
    .raw(`create view ${RANGE} as ${head}select * from ${OTHER}\n  union all\n  ${ONCE}\n  ) i`)
    .execute(db);
  await comment(
    PAYMENTS,
    "settlement_items' ledger payins and payouts, each once, with both dates: the provider row's it is paired with (paired_on, paired_transaction_id) and its Eastern booking day (booked_on).",
  ).execute(db);
  await comment(OTHER, "settlement_items' items other than the ledger's payins and payouts.").execute(db);
  await comment(
    RANGE,
    "settlement_items' rows for every account, each ledger payment read once: for reading a range of days whole (a full run's roll-forward); a filter on a few days reads the whole ledger here.",
  ).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  const { head, tail } = await viewParts(db, 'public.settlement_items');
  const other = await sql<{ def: string }>`select pg_get_viewdef(${OTHER}::regclass) as def`.execute(db);
  const branches = other.rows[0]!.def.replace(/;\s*$/, '').split(/\s+UNION ALL\s+/);
  await replaceItems(
    db,
    head,
    [...branches.slice(0, 2), OLD_PAIRED, OLD_UNPAIRED, ...branches.slice(2)],
    tail,
  );
  await sql.raw(`drop view ${RANGE}, ${OTHER}, ${PAYMENTS}`).execute(db);
}
