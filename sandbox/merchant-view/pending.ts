import type { TransactionRecord } from '../../domain/records.ts';
import { addBusinessDays } from '../../domain/time/business-days.ts';
import { easternDateOf } from '../../domain/time/eastern.ts';
import { businessDateOf, expect, type Planting } from './planting.ts';

/** Business days after which a PENDING transaction is stuck_pending (the default of RECON_STUCK_PENDING_DAYS). */
const STUCK_AFTER_BUSINESS_DAYS = 5;

/**
 * A provider-side fact the history produces by itself: a transaction still PENDING at `asOf` five
 * business days (Canadian bank holidays, Civic Holiday included) after its Eastern transaction date.
 */
export function plantStuckPending(p: Planting, t: TransactionRecord, asOf: string): void {
  if (t.status !== 'PENDING') return;
  const on = businessDateOf(t);
  if (addBusinessDays(on, STUCK_AFTER_BUSINESS_DAYS, { civicHoliday: true }) > easternDateOf(asOf)) return;
  expect(p, `stuck_pending:${t.transaction_id}`, 'stuck_pending', t.amount_cents, null, on);
}
