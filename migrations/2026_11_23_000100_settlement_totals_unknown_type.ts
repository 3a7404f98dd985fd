import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.
// daily_settlement_totals counted successful transactions of unknown type (no mapped DEBIT/CREDIT)
// as payins in net_cents. Their sign is unknown: net_cents leaves them out (null on their row) and
// two columns at the end count them, so that nothing is guessed and nothing disappears. CREATE OR
// REPLACE keeps the view's grants and the comments of its existing columns.

const KNOWN = `transaction_type in ('DEBIT','CREDIT')`;

const query = `
  select transaction_on as business_date, currency, transaction_type,
         count(*)::bigint as transactions,
         sum(amount_cents)::bigint as amount_cents,
         coalesce(sum(fee_cents), 0)::bigint as fee_cents,
         (case when transaction_type = 'CREDIT' then -sum(amount_cents)
               when transaction_type = 'DEBIT' then sum(amount_cents) end
           - coalesce(sum(fee_cents), 0))::bigint as net_cents,
         (case when ${KNOWN} then 0 else count(*) end)::bigint as unknown_type_count,
         (case when ${KNOWN} then 0 else sum(amount_cents) end)::bigint as unknown_type_amount_cents
  from provider_transactions
  where status = 'SUCCESSFUL'
  group by transaction_on, currency, transaction_type`;

const comments: Record<string, string> = {
  transaction_type:
    'DEBIT (payin) or CREDIT (payout); null when the raw type had no known meaning (counted in unknown_type_count, left out of net_cents).',
  net_cents:
    "Payins minus payouts minus fees, cents, in this row's currency: what the day adds to the merchant balance for this type. Null for transactions of unknown type, whose sign is not known (see unknown_type_count).",
  unknown_type_count:
    'Successful transactions of this row whose type has no known meaning (neither DEBIT nor CREDIT): left out of net_cents, since their sign is unknown; 0 on DEBIT and CREDIT rows.',
  unknown_type_amount_cents:
    "Sum of the amounts of those transactions, cents, in this row's currency, with no sign applied; 0 on DEBIT and CREDIT rows.",
};

const summaryComment =
  'What the run found, when it finished: counts of matches, lifecycle counts, and discrepancies as a list of {kind, currency, count, amount_cents} (amounts per currency, never added across currencies; runs before 2026-11-23 stored {kind: {count, cents}}).';

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(`create or replace view daily_settlement_totals as ${query}`).execute(db);
  for (const [col, comment] of Object.entries(comments)) {
    await sql.raw(`comment on column daily_settlement_totals.${col} is ${literal(comment)}`).execute(db);
  }
  await sql.raw(`comment on column reconcile_runs.summary is ${literal(summaryComment)}`).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // A view cannot lose columns in place: recreate it as it was, with its comments and grant.
  await sql.raw('drop view daily_settlement_totals').execute(db);
  await sql
    .raw(
      `create view daily_settlement_totals as
      select transaction_on as business_date, currency, transaction_type,
             count(*)::bigint as transactions,
             sum(amount_cents)::bigint as amount_cents,
             coalesce(sum(fee_cents), 0)::bigint as fee_cents,
             (case when transaction_type = 'CREDIT' then -1 else 1 end * sum(amount_cents) - coalesce(sum(fee_cents), 0))::bigint as net_cents
      from provider_transactions
      where status = 'SUCCESSFUL'
      group by transaction_on, currency, transaction_type`,
    )
    .execute(db);
  const old: Record<string, string> = {
    business_date: 'Eastern business date of the transactions.',
    currency: 'ISO 4217 currency code.',
    transaction_type: 'DEBIT (payin) or CREDIT (payout); null when the raw type had no known meaning.',
    transactions: 'Number of successful transactions.',
    amount_cents: 'Sum of their amounts, cents.',
    fee_cents: 'Sum of their merchant fees, cents (missing fees count as 0).',
    net_cents:
      'Payins minus payouts minus fees, cents: what the day adds to the merchant balance for this type.',
  };
  await sql
    .raw(
      `comment on view daily_settlement_totals is ${literal('Successful provider transactions per Eastern business date, currency and type: how many, how much, the fees and the net. The figures finance checks against the bank statement.')}`,
    )
    .execute(db);
  for (const [col, comment] of Object.entries(old)) {
    await sql.raw(`comment on column daily_settlement_totals.${col} is ${literal(comment)}`).execute(db);
  }
  await sql.raw('grant select on daily_settlement_totals to recon_analyst').execute(db);
  await sql
    .raw(
      `comment on column reconcile_runs.summary is ${literal('Counts of matches and discrepancies by kind, when the run finished.')}`,
    )
    .execute(db);
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
