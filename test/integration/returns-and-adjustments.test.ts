import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { importNotificationHistory } from '../../ingest/notifications/import-history.ts';
import { parseLedgerStream } from '../../provider/formats/ledger.ts';
import { matchItems, undoMatch } from '../../reconcile/manual-matches/apply.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { useTestDatabase } from '../support/database.ts';
import { insertLedger, insertLoad, insertReturns, insertTransactions } from '../support/recon-rows.ts';

/**
 * Returns and adjustments close the loop (issue 25, section 3): return notifications against the
 * return report, representments against their re-debit, provider adjustments against the ledger's
 * ADJUSTMENT entries, and the settlement roll-forward whose remainder nothing explains. Real
 * PostgreSQL, rows written straight into the warehouse.
 */

const h = useTestDatabase();
const RANGE = { from: '2026-03-01', to: '2026-03-12', now: '2026-03-20T12:00:00Z' };

function returnNotification(transactionId: string, receivedAt: string, over: Record<string, unknown> = {}) {
  return {
    kind: 'return',
    received_at: receivedAt,
    payload: {
      merchant: { merchantId: 'IBTMERCH0001' },
      transaction: {
        transactionId,
        transactionType: 'DEBIT',
        transactionStatus: 'RETURNED',
        transactionAmount: 1000,
        transactionFee: 0,
        currencyCode: 'CAD',
        ...over,
      },
    },
  };
}

async function notify(lines: object[]): Promise<void> {
  const s = await importNotificationHistory(h.db, Readable.from(lines.map((l) => `${JSON.stringify(l)}\n`)));
  expect(s.quarantined).toBe(0);
}

async function openDiscrepancies(kinds: string[]) {
  const r = await sql<{
    key: string;
    kind: string;
    date: string;
    expected: string | null;
    actual: string | null;
  }>`
    select discrepancy_key as key, kind, business_date::text as date,
      expected_amount_cents::text as expected, actual_amount_cents::text as actual
    from discrepancies where resolved_at is null and kind = any(${kinds}) order by discrepancy_key`.execute(
    h.db,
  );
  return r.rows;
}

/** Payins of 1000 cents (fee 25) on `day` (default March 2), each with its ledger entry. */
async function bookedPayins(ids: string[], day = '2026-03-02'): Promise<number> {
  const at = { transaction_on: day, transaction_at: `${day}T15:00:00Z` };
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(
    h.db,
    load,
    ids.map((transaction_id) => ({ transaction_id, ...at })),
  );
  await insertLedger(
    h.db,
    ids.map((id) => ({
      merchant_transaction_id: `M-${id}`,
      transaction_id: id,
      booked_at: `${day}T15:00:01Z`,
    })),
  );
  return load;
}

describe('return notifications against the return report', () => {
  it('matches a return with its notification and booking, and flags one never notified and one never reported', async () => {
    await bookedPayins(['T1', 'T2', 'T3']);
    const returns = await insertLoad(h.db, 'report-returns');
    await insertReturns(h.db, returns, [
      {
        return_transaction_id: 'R1',
        original_transaction_id: 'T1',
        merchant_transaction_id: 'M-T1',
        notify_status: 'C',
      },
      {
        return_transaction_id: 'R2',
        original_transaction_id: 'T2',
        merchant_transaction_id: 'M-T2',
        notify_status: 'S',
      },
      // The legacy e-transfer product does not notify: its returns carry no delivery status.
      {
        return_transaction_id: 'R3',
        original_transaction_id: 'T3',
        merchant_transaction_id: 'M-T3',
        source: 'legacy-returns',
      },
    ]);
    await insertLedger(
      h.db,
      ['1', '2', '3'].map((n) => ({
        merchant_transaction_id: `M-T${n}-R`,
        transaction_type: 'RETURN',
        status: 'RETURNED',
        transaction_id: `R${n}`,
        original_merchant_transaction_id: `M-T${n}`,
        booked_at: '2026-03-04T18:00:00Z',
      })),
    );
    await notify([
      returnNotification('R1', '2026-03-04T15:00:00Z'),
      // A return notification of a return no report lists.
      returnNotification('R9', '2026-03-05T15:00:00Z', { transactionAmount: 700 }),
    ]);

    // Within the grace period (two business days) nothing is due yet.
    await reconcileRange(h.db, { ...RANGE, now: '2026-03-05T20:00:00Z' });
    expect(await openDiscrepancies(['return_notification_missing', 'return_not_reported'])).toEqual([]);

    await reconcileRange(h.db, RANGE);
    expect(
      await openDiscrepancies(['return_notification_missing', 'return_not_reported', 'return_not_booked']),
    ).toEqual([
      {
        key: 'return_not_reported:R9',
        kind: 'return_not_reported',
        date: '2026-03-05',
        expected: null,
        actual: '700',
      },
      {
        key: 'return_notification_missing:R2',
        kind: 'return_notification_missing',
        date: '2026-03-04',
        expected: '1000',
        actual: null,
      },
    ]);
    const claims = await sql<{ target_id: string }>`
      select target_id from notification_matches where kind = 'return' order by 1`.execute(h.db);
    expect(claims.rows.map((r) => r.target_id)).toEqual(['R1']);

    // The report catches up with the notification: the next run closes it.
    await insertReturns(h.db, returns, [
      { return_transaction_id: 'R9', notify_status: 'C', amount_cents: 700 },
    ]);
    await reconcileRange(h.db, RANGE);
    expect((await openDiscrepancies(['return_not_reported'])).map((d) => d.key)).toEqual([]);
  });
});

describe('representments', () => {
  it('flags a RETURNED_WITH_REPRESENTMENT whose next action date passed without the re-debit, and takes the re-debit for no duplicate', async () => {
    const load = await bookedPayins(['T4', 'T5']);
    const returns = await insertLoad(h.db, 'report-returns');
    await insertReturns(
      h.db,
      returns,
      ['4', '5'].map((n) => ({
        return_transaction_id: `R${n}`,
        original_transaction_id: `T${n}`,
        merchant_transaction_id: `M-T${n}`,
        notify_status: 'C',
        next_action_date: '2026-03-09',
      })),
    );
    await insertLedger(
      h.db,
      ['4', '5'].map((n) => ({
        merchant_transaction_id: `M-T${n}-R`,
        transaction_type: 'RETURN',
        status: 'RETURNED',
        transaction_id: `R${n}`,
        original_merchant_transaction_id: `M-T${n}`,
        booked_at: '2026-03-04T18:00:00Z',
      })),
    );
    const rwr = { transactionStatus: 'RETURNED_WITH_REPRESENTMENT', nextActionDate: '2026-03-09' };
    await notify([
      returnNotification('R4', '2026-03-04T15:00:00Z', rwr),
      returnNotification('R5', '2026-03-04T15:00:00Z', rwr),
    ]);
    // T5 is debited again on its next action date, under its merchant transaction id.
    await insertTransactions(h.db, load, [
      {
        transaction_id: 'T5B',
        merchant_transaction_id: 'M-T5',
        transaction_at: '2026-03-09T15:00:00Z',
        transaction_on: '2026-03-09',
      },
    ]);
    await insertLedger(h.db, [
      {
        merchant_transaction_id: 'M-T5-P',
        transaction_type: 'REPRESENTMENT',
        transaction_id: 'T5B',
        original_merchant_transaction_id: 'M-T5',
        booked_at: '2026-03-09T15:00:01Z',
      },
    ]);

    // Before the next action date and its grace period: nothing.
    await reconcileRange(h.db, { ...RANGE, now: '2026-03-10T12:00:00Z' });
    expect(await openDiscrepancies(['representment_missed'])).toEqual([]);

    await reconcileRange(h.db, RANGE);
    expect(await openDiscrepancies(['representment_missed', 'duplicate_merchant_transaction'])).toEqual([
      {
        key: 'representment_missed:R4',
        kind: 'representment_missed',
        date: '2026-03-09',
        expected: '1000',
        actual: null,
      },
    ]);
    // The re-debit counts as a representment in the roll-forward, on both sides.
    const day = await sql<{ p: string; l: string; u: string }>`
      select provider_representments_cents::text as p, ledger_representments_cents::text as l, unexplained_cents::text as u
      from daily_settlement_totals where business_date = '2026-03-09' and currency = 'CAD'`.execute(h.db);
    expect(day.rows).toEqual([{ p: '1000', l: '1000', u: '0' }]);
  });
});

describe('adjustments', () => {
  it('matches a provider adjustment with a ledger ADJUSTMENT entry and flags one not booked', async () => {
    await bookedPayins(['T6']);
    const load = await insertLoad(h.db, 'legacy-adjustments');
    const adjustment = (key: string, amount: number, fee: number) => ({
      adjustment_key: key,
      transaction_id: 'T6',
      adjustment_type: amount === 0 ? 'F' : 'A',
      amount_cents: amount,
      fee_cents: fee,
      currency: 'CAD',
      adjusted_on: '2026-03-03',
      source: 'legacy-adjustments',
      load_id: load,
      first_load_id: load,
      raw: '',
    });
    await h.db
      .insertInto('provider_adjustments')
      .values([adjustment('A1#1', -300, 0), adjustment('A2#1', 0, -5)])
      .execute();
    // The ledger contract: an ADJUSTMENT entry, amount and fee signed as the provider reports them.
    const parsed = [];
    const csv = [
      'merchant_transaction_id,transaction_type,amount_cents,fee_cents,currency,status,booked_at,transaction_id',
      'ADJ-T6,ADJUSTMENT,-300,0,CAD,SUCCESSFUL,2026-03-03T17:00:00Z,T6',
      'BAD-T6,DEBIT,-300,0,CAD,SUCCESSFUL,2026-03-03T17:00:00Z,T6',
    ].join('\n');
    for await (const row of parseLedgerStream(Readable.from([csv]), 'ledger-csv', 'ledger.csv')) {
      parsed.push(row);
    }
    expect(parsed[1]).toMatchObject({ ok: false });
    const entry = parsed[0]!;
    if (!entry.ok) throw new Error(entry.reason);
    const { kind: _kind, account: _account, merchant_id: _merchant, ...record } = entry.record;
    expect(record).toMatchObject({ transaction_type: 'ADJUSTMENT', amount_cents: -300, fee_cents: 0 });
    await insertLedger(h.db, [record]);

    await reconcileRange(h.db, RANGE);
    expect(await openDiscrepancies(['adjustment_not_booked', 'settlement_unexplained'])).toEqual([
      {
        key: 'adjustment_not_booked:A2#1',
        kind: 'adjustment_not_booked',
        date: '2026-03-03',
        expected: '5',
        actual: null,
      },
    ]);
  });
});

describe('the settlement roll-forward', () => {
  it('explains a day by its open discrepancies, and a remainder nothing explains is a discrepancy', async () => {
    const day = { transaction_on: '2026-03-06', transaction_at: '2026-03-06T15:00:00Z' };
    const load = await bookedPayins(['T7', 'T8'], '2026-03-06');
    await insertTransactions(h.db, load, [
      { transaction_id: 'T9', transaction_type: 'CREDIT', amount_cents: 400, fee_cents: 40, ...day },
      // Not in the ledger: missing_in_ledger explains it.
      { transaction_id: 'T10', amount_cents: 250, fee_cents: 25, ...day },
    ]);
    await insertLedger(h.db, [
      {
        merchant_transaction_id: 'M-T9',
        transaction_id: 'T9',
        transaction_type: 'CREDIT',
        amount_cents: 400,
      },
      // A goodwill credit the provider never made: no rule pairs it.
      {
        merchant_transaction_id: 'GOODWILL-1',
        transaction_type: 'ADJUSTMENT',
        amount_cents: 150,
        booked_at: '2026-03-06T20:00:00Z',
      },
    ]);
    await reconcileRange(h.db, RANGE);
    const totals = await sql<Record<string, string>>`
      select provider_payins_cents, provider_payouts_cents, provider_fees_cents, provider_net_cents,
        ledger_payins_cents, ledger_payouts_cents, ledger_fees_cents, ledger_adjustments_cents, ledger_net_cents,
        difference_cents, explained_cents, unexplained_cents
      from daily_settlement_totals where business_date = '2026-03-06' and currency = 'CAD'`.execute(h.db);
    // Provider: payins 1000 + 1000 + 250, a payout of 400, fees 25 + 25 + 40 + 25: net 1735.
    // Ledger: payins 2000, payout 400, fees the provider's of its pairs (90), adjustment 150: net 1660.
    expect(
      totals.rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v)]))),
    ).toEqual([
      {
        provider_payins_cents: 2250,
        provider_payouts_cents: 400,
        provider_fees_cents: 115,
        provider_net_cents: 1735,
        ledger_payins_cents: 2000,
        ledger_payouts_cents: 400,
        ledger_fees_cents: 90,
        ledger_adjustments_cents: 150,
        ledger_net_cents: 1660,
        difference_cents: 75,
        explained_cents: 225,
        unexplained_cents: -150,
      },
    ]);
    const found = await sql<{ key: string; difference: string }>`
      select discrepancy_key as key, difference_cents::text as difference from discrepancies
      where kind = 'settlement_unexplained' and resolved_at is null`.execute(h.db);
    expect(found.rows).toEqual([{ key: 'settlement_unexplained:2026-03-06:CAD', difference: '-150' }]);
  });
});

describe('the roll-forward and manual matches', () => {
  it('explains the items of a manual match that holds, in the view and the rule, and its discrepancies again once it is undone', async () => {
    // A payin of 1000 (fee 25) the ledger booked under a mistyped id, as 1025 with no fee of its own:
    // both nets move 975 and 1025, and a person pairs them with a write-off of the 25.
    const load = await insertLoad(h.db, 'report-transactions');
    await insertTransactions(h.db, load, [
      { transaction_id: 'T-MM', transaction_on: '2026-03-11', transaction_at: '2026-03-11T15:00:00Z' },
    ]);
    await insertLedger(h.db, [
      {
        merchant_transaction_id: 'M-TMM-typo',
        amount_cents: 1000,
        fee_cents: 0,
        booked_at: '2026-03-11T15:00:01Z',
      },
    ]);
    await reconcileRange(h.db, RANGE);
    const day = async () =>
      (
        await sql<{ explained: string; unexplained: string }>`select explained_cents::text as explained,
          unexplained_cents::text as unexplained from daily_settlement_totals
          where business_date = '2026-03-11' and currency = 'CAD'`.execute(h.db)
      ).rows;
    // Two open discrepancies (missing_in_ledger, missing_at_provider) explain the day.
    expect(await day()).toEqual([{ explained: '-25', unexplained: '0' }]);
    const m = await matchItems(
      h.db,
      {
        account: 'default',
        providerTransactionIds: ['T-MM'],
        ledgerMerchantTransactionIds: ['M-TMM-typo'],
        note: 'mistyped id',
        origin: 'cli',
      },
      { name: 'ana', mayWriteOff: true },
    );
    await reconcileRange(h.db, RANGE);
    // Matched by hand: the discrepancies are closed, the match explains the day, no remainder.
    expect(await day()).toEqual([{ explained: '-25', unexplained: '0' }]);
    expect((await openDiscrepancies(['settlement_unexplained'])).map((d) => d.date)).not.toContain(
      '2026-03-11',
    );
    await undoMatch(h.db, m.matchId, 'not the same payin', { name: 'ana' });
    await reconcileRange(h.db, RANGE);
    expect(await day()).toEqual([{ explained: '-25', unexplained: '0' }]);
  });
});

describe('money in flight', () => {
  it('leaves a ledger entry whose provider transaction is still PENDING out of the remainder', async () => {
    const day = { transaction_on: '2026-03-10', transaction_at: '2026-03-10T15:00:00Z' };
    const load = await insertLoad(h.db, 'report-transactions');
    await insertTransactions(h.db, load, [
      { transaction_id: 'T11', status: 'PENDING', raw_status: 'PENDING', fee_cents: 0, ...day },
    ]);
    await insertLedger(h.db, [
      { merchant_transaction_id: 'M-T11', transaction_id: 'T11', booked_at: '2026-03-10T15:00:01Z' },
    ]);
    // Two business days after March 10 the day is due; the transaction is not stuck yet.
    await reconcileRange(h.db, { ...RANGE, now: '2026-03-12T20:00:00Z' });
    const totals = await sql<{ difference: string; unexplained: string }>`
      select difference_cents::text as difference, unexplained_cents::text as unexplained
      from daily_settlement_totals where business_date = '2026-03-10' and currency = 'CAD'`.execute(h.db);
    expect(totals.rows).toEqual([{ difference: '-1000', unexplained: '0' }]);
    const keys = (await openDiscrepancies(['settlement_unexplained'])).map((d) => d.key);
    expect(keys).not.toContain('settlement_unexplained:2026-03-10:CAD');
  });
});
