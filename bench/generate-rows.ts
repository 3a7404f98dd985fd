import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/database.ts';
import { addDays, daysInMonth } from '../domain/time/calendar.ts';
import { reconcileRange } from '../reconcile/reconcile-range.ts';

/** Warehouse rows for the reconciliation benchmarks, generated in SQL: a load, provider transactions, ledger, notifications. */

/** The one committed load every generated row belongs to (load_id 1 of a fresh database). */
export async function insertBenchLoad(db: Kysely<Database>): Promise<void> {
  await sql`insert into loads (source, environment, origin, format, status) values ('report-transactions','staging','direct','report-json','committed')`.execute(
    db,
  );
}

/**
 * Generates `count` provider transactions numbered from `first`, spread evenly over `seconds` from
 * `start`, with their ledger entries and notifications. The ledger agrees except: 0.5% missing, 0.3%
 * amount, 0.2% status; notifications: 0.5% missing, 0.2% late, 0.1% with another amount.
 * `duplicates`: a few second transactions for one merchant transaction id (0.1%), so that the
 * duplicate search has work; `ledgerOnly`: ledger entries the provider never saw (0.2%).
 */
export async function generateRows(
  db: Kysely<Database>,
  first: number,
  count: number,
  start: string,
  seconds: number,
  options: { duplicates?: boolean; ledgerOnly?: boolean } = {},
): Promise<void> {
  const last = first + count - 1;
  await sql`insert into provider_transactions (transaction_id, merchant_id, merchant_transaction_id, product, transaction_type,
      raw_transaction_type, status, raw_status, amount_cents, fee_cents, currency, transaction_at, transaction_on,
      notify_status, source, load_id, first_load_id, raw)
    select 'T' || lpad(i::text, 10, '0'), 'IBTMERCH0001', 'M' || lpad(i::text, 10, '0'), 'IBT',
      case when i % 10 < 7 then 'DEBIT' else 'CREDIT' end, case when i % 10 < 7 then 'DEBIT' else 'CREDIT' end,
      case when i % 12 = 0 then 'REJECTED' else 'SUCCESSFUL' end, case when i % 12 = 0 then 'REJECTED' else 'SUCCESSFUL' end,
      100 + (i::bigint * 7919) % 500000, case when i % 12 = 0 then 0 else 25 end, case when i % 25 = 0 then 'USD' else 'CAD' end,
      ts, (ts at time zone 'America/Toronto')::date, case when i % 50 = 7 then 'I' else 'C' end,
      'report-transactions', 1, 1, ''
    from generate_series(${first}::int, ${last}::int) i,
      lateral (select ${start}::timestamptz + make_interval(secs => ((i - ${first}::int)::bigint * ${seconds}::int / ${count}::int)::double precision) as ts) t`.execute(
    db,
  );
  if (options.duplicates)
    await sql`insert into provider_transactions (transaction_id, merchant_id, merchant_transaction_id, product, transaction_type,
      raw_transaction_type, status, raw_status, amount_cents, fee_cents, currency, transaction_at, transaction_on,
      notify_status, source, load_id, first_load_id, raw)
    select 'D' || substr(transaction_id, 2), merchant_id, merchant_transaction_id, product, transaction_type,
      raw_transaction_type, 'REJECTED', 'REJECTED', amount_cents, 0, currency, transaction_at + interval '1 minute',
      transaction_on, notify_status, source, load_id, first_load_id, raw
    from provider_transactions
    where transaction_id between ${'T' + String(first).padStart(10, '0')} and ${'T' + String(last).padStart(10, '0')}
      and substr(transaction_id, 2)::int % 997 = 1`.execute(db);
  await sql`insert into merchant_ledger (merchant_transaction_id, transaction_type, amount_cents, currency, status, booked_at, transaction_id)
    select p.merchant_transaction_id, p.transaction_type,
      p.amount_cents + case when i % 1000 between 10 and 12 then 7 else 0 end, p.currency,
      case when i % 1000 between 20 and 21 and p.status = 'SUCCESSFUL' then 'REJECTED' else p.status end,
      p.transaction_at + interval '2 seconds', p.transaction_id
    from provider_transactions p, lateral (select substr(p.transaction_id, 2)::int as i) x
    where p.transaction_id between ${'T' + String(first).padStart(10, '0')} and ${'T' + String(last).padStart(10, '0')}
      and i % 200 <> 3`.execute(db);
  if (options.ledgerOnly) {
    const n = Math.floor(count / 500);
    await sql`insert into merchant_ledger (merchant_transaction_id, transaction_type, amount_cents, currency, status, booked_at)
      select 'L' || lpad(i::text, 10, '0'), 'DEBIT', 1234, 'CAD', 'SUCCESSFUL',
        ${start}::timestamptz + make_interval(secs => ((i - ${first}::int)::bigint * 500 * ${seconds}::int / ${count}::int)::double precision)
      from generate_series(${first}::int, ${first + n - 1}::int) i`.execute(db);
  }
  await sql`insert into notifications (kind, delivery_key, transaction_id, merchant_transaction_id, merchant_id, transaction_type,
      raw_transaction_type, status, raw_status, amount_cents, raw_amount, fee_cents, currency, payload, received_at, last_received_at)
    select 'transaction', encode(sha256(convert_to(p.transaction_id, 'UTF8')), 'hex'), p.transaction_id, p.merchant_transaction_id,
      p.merchant_id, p.transaction_type, p.transaction_type, p.status,
      case when p.status = 'SUCCESSFUL' then 'SUCCESS' else p.status end,
      p.amount_cents + case when i % 1000 = 40 then 1 else 0 end, (p.amount_cents + case when i % 1000 = 40 then 1 else 0 end)::text,
      p.fee_cents, p.currency, jsonb_build_object('transaction', jsonb_build_object('transactionId', p.transaction_id)),
      p.transaction_at + case when i % 500 = 9 then interval '3 hours' else interval '20 seconds' end,
      p.transaction_at + case when i % 500 = 9 then interval '3 hours' else interval '20 seconds' end
    from provider_transactions p, lateral (select substr(p.transaction_id, 2)::int as i) x
    where p.transaction_id between ${'T' + String(first).padStart(10, '0')} and ${'T' + String(last).padStart(10, '0')}
      and i % 200 <> 5 and p.notify_status = 'C'`.execute(db);
}

/**
 * Reconciles from..to one calendar month at a time (the last cut at `to`), judged at `now`: a history
 * as the nightly runs would have left it, claims and discrepancies included.
 */
export async function reconcileMonthByMonth(
  db: Kysely<Database>,
  range: { from: string; to: string; now: string },
  progress?: (month: string) => void,
): Promise<void> {
  for (let from = range.from; from <= range.to;) {
    const days = daysInMonth(Number(from.slice(0, 4)), Number(from.slice(5, 7)));
    const monthEnd = `${from.slice(0, 7)}-${String(days).padStart(2, '0')}`;
    await reconcileRange(db, { from, to: monthEnd < range.to ? monthEnd : range.to, now: range.now });
    progress?.(from.slice(0, 7));
    from = addDays(monthEnd, 1);
  }
}
