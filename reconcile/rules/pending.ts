import { sql } from 'kysely';
import { aboutTransaction } from './finding-shapes.ts';
import type { Rule } from './rule.ts';

/**
 * stuck_pending: a provider transaction still PENDING settings.stuckPendingBusinessDays business days
 * (RECON_STUCK_PENDING_DAYS, Eastern business calendar) after its transaction date. The nightly run
 * follows every non-final transaction until the provider reports it final (reconcile/follow-up.ts);
 * the evidence says when it was last checked (the last status lookup, the last report load that
 * wrote the row) and what the provider said then.
 */
const LAST_CHECKS = `left join lateral (select s.looked_up_at, s.raw_status, s.error from status_lookups s
    where s.transaction_id = f.transaction_id order by s.looked_up_at desc, s.lookup_id desc limit 1) s on true
  left join lateral (select l.load_id, l.source, l.finished_at from provider_transactions p join loads l using (load_id)
    where p.transaction_id = f.transaction_id) l on true`;

export const stuckPending: Rule = {
  name: 'stuck_pending',
  rule: 'pending_until_final',
  kinds: ['stuck_pending'],
  reads: { suspects: true, join: LAST_CHECKS },
  when: (ctx) => sql`f.status = 'PENDING' and f.transaction_on <= ${ctx.stuckThrough}::date`,
  select: (ctx) => ({
    ...aboutTransaction('stuck_pending'),
    expected: sql`jsonb_build_object('final_within_business_days', ${ctx.settings.stuckPendingBusinessDays}::int,
      'transaction_on', f.transaction_on)`,
    actual: `jsonb_build_object('status', f.status, 'raw_status', f.raw_status,
      'last_checked_at', greatest(s.looked_up_at, l.finished_at),
      'last_status_lookup', case when s.looked_up_at is not null then jsonb_build_object('looked_up_at', s.looked_up_at,
        'provider_said', coalesce(s.raw_status, s.error)) end,
      'last_load', case when l.load_id is not null then jsonb_build_object('load_id', l.load_id, 'source', l.source,
        'finished_at', l.finished_at) end)`,
    expected_amount_cents: 'f.amount_cents',
    candidates: `jsonb_build_object('provider', jsonb_build_array(f.transaction_id))`,
  }),
};

export const PENDING_RULES: readonly Rule[] = [stuckPending];
