import { sql } from 'kysely';
import type { createDatabase } from '../db/database-on-client.ts';
import { reconcileRange, type ReconcileSummary } from '../reconcile/reconcile-range.ts';
import { pgBackendCpuSeconds } from './backend-cpu.ts';

/**
 * Re-runs after changes (issue 30, section 1): the run over changed keys (reconcile/incremental.ts)
 * against a full run of the same range after the same changes, on the matching bench's month. Each
 * full run comes right after the incremental one and must find nothing to do: no discrepancy opened,
 * reopened, changed or resolved, and the claims as the incremental run left them. That is the
 * property test's check (test/integration/reconcile-incremental.test.ts) at the bench's size.
 */
export interface ChangedRerunFigures {
  /** After one ledger entry's amount changed. */
  readonly one: ChangedRerun;
  /** After four: an amount, a provider status, a duplicate that takes a ledger entry's claim, a notification. */
  readonly four: ChangedRerun;
}

export interface ChangedRerun {
  readonly incrementalSeconds: number;
  readonly fullSeconds: number;
  /** incrementalSeconds / fullSeconds: issue 30's target is 0.05 at most (one change). */
  readonly ratio: number;
  /** PostgreSQL CPU seconds of each run (bench/backend-cpu.ts), when readable: steadier than wall time under load. */
  readonly incrementalCpuSeconds: number | null;
  readonly fullCpuSeconds: number | null;
  /** The full run after the incremental one changed nothing. */
  readonly agree: boolean;
}

type Db = ReturnType<typeof createDatabase>;
const RANGE = { from: '2026-03-01', to: '2026-03-31' };

export async function measureChangedReruns(db: Db, day: number): Promise<ChangedRerunFigures> {
  await sql`update merchant_ledger set amount_cents = amount_cents + 1
    where merchant_transaction_id = (select min(merchant_transaction_id) from merchant_ledger)`.execute(db);
  const one = await rerun(db, day);
  await sql`update merchant_ledger set amount_cents = amount_cents + 1
    where merchant_transaction_id = (select max(merchant_transaction_id) from merchant_ledger)`.execute(db);
  await sql`update provider_transactions set status = 'REJECTED', raw_status = 'REJECTED'
    where transaction_id = (select min(transaction_id) from provider_transactions where status = 'SUCCESSFUL')`.execute(
    db,
  );
  // A second provider row for a claimed merchant transaction id, agreeing better: the claim moves.
  await sql`insert into provider_transactions (transaction_id, merchant_transaction_id, product, transaction_type,
      raw_transaction_type, status, raw_status, amount_cents, fee_cents, currency, transaction_at, transaction_on,
      notify_status, source, load_id, first_load_id, raw)
    select 'BENCH-DUP', p.merchant_transaction_id, p.product, l.transaction_type, l.transaction_type, 'SUCCESSFUL',
      'SUCCESSFUL', l.amount_cents, p.fee_cents, l.currency, p.transaction_at, p.transaction_on, null, p.source,
      p.load_id, p.first_load_id, '{}'
    from provider_transactions p join merchant_ledger l using (merchant_transaction_id)
    where p.transaction_id = (select max(transaction_id) from transaction_matches)`.execute(db);
  await sql`insert into notifications (kind, delivery_key, transaction_id, merchant_transaction_id, transaction_type,
      status, raw_status, amount_cents, fee_cents, currency, payload, received_at)
    select 'transaction', encode(sha256('bench-changed-rerun'::bytea), 'hex'), p.transaction_id, p.merchant_transaction_id, p.transaction_type,
      'FAILED', 'FAILED', p.amount_cents, p.fee_cents, p.currency, '{}', p.transaction_at + interval '1 hour'
    from provider_transactions p where p.transaction_id = (select min(transaction_id) from provider_transactions)`.execute(
    db,
  );
  const four = await rerun(db, day + 1);
  return { one, four };
}

async function rerun(db: Db, day: number): Promise<ChangedRerun> {
  const now = `2026-05-${String(day).padStart(2, '0')}T12:00:00Z`;
  const cpu0 = await pgBackendCpuSeconds(db);
  const t0 = performance.now();
  const incremental = await reconcileRange(db, { ...RANGE, now });
  const incrementalSeconds = (performance.now() - t0) / 1000;
  const cpu1 = await pgBackendCpuSeconds(db);
  if (incremental.scope !== 'incremental')
    throw new Error(`the re-run after a change was ${incremental.scope} (${incremental.fullBecause ?? ''})`);
  const claimsBefore = await claimsDigest(db);
  const t1 = performance.now();
  const full = await reconcileRange(db, { ...RANGE, now, full: true });
  const fullSeconds = (performance.now() - t1) / 1000;
  const cpu2 = await pgBackendCpuSeconds(db);
  const cpu = (a: number | null, b: number | null) =>
    a === null || b === null ? null : Math.round((b - a) * 10) / 10;
  const agree = nothingChanged(full) && (await claimsDigest(db)) === claimsBefore;
  return {
    incrementalSeconds: Math.round(incrementalSeconds * 100) / 100,
    fullSeconds: Math.round(fullSeconds * 10) / 10,
    ratio: Math.round((incrementalSeconds / fullSeconds) * 1000) / 1000,
    incrementalCpuSeconds: cpu(cpu0, cpu1),
    fullCpuSeconds: cpu(cpu1, cpu2),
    agree,
  };
}

/** The run changed no discrepancy: none opened, reopened, changed or resolved. */
export function nothingChanged(s: ReconcileSummary): boolean {
  const { opened, reopened, changed, resolved } = s.lifecycle;
  return opened + reopened + changed + resolved === 0;
}

/** A digest of every claim but the run that wrote it. */
export async function claimsDigest(db: Db): Promise<string> {
  const r = await sql<{ digest: string }>`select md5(
      (select coalesce(string_agg(transaction_id || '=' || merchant_transaction_id, ',' order by transaction_id), '')
        from transaction_matches) ||
      (select coalesce(string_agg(notification_id || '=' || target_id, ',' order by notification_id), '')
        from notification_matches) ||
      (select coalesce(string_agg(return_transaction_id || '=' || coalesce(ledger_merchant_transaction_id, ''), ','
        order by return_transaction_id), '') from return_matches) ||
      (select coalesce(string_agg(transaction_id, ',' order by transaction_id), '') from source_matches)) as digest`.execute(
    db,
  );
  return r.rows[0]!.digest;
}
