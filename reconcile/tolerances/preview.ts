import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { easternDateOf } from '../../domain/time/eastern.ts';
import { reconcileRange } from '../reconcile-range.ts';
import type { RuleContext } from '../rules/statement.ts';
import { writeOffLimit } from '../rules/tolerance-terms.ts';
import type { ReconcileSettings } from '../settings.ts';
import type { SettingsProposal } from './settings-file.ts';
import { loadTolerances, type Tolerances, tolerancesOf } from './tolerance.ts';
import { RECON_ACTOR } from './write-offs.ts';

/**
 * `recon rules preview --settings FILE` and the workbench's preview page: the matching of the whole
 * history of each account the proposal names, with the proposed tolerances, in a reconcile run that
 * is rolled back before the lifecycle touches a discrepancy (nothing is written but the record of the
 * preview in reconcile_settings). Per kind and currency it counts what would open (new or reopened),
 * be written off by the run, close, and how the result agrees with what people decided on resolved
 * items: resolved as accepted or written_off where the proposal still finds the problem, and as
 * fixed_in_ledger where it no longer does, agree; the other way round, disagree.
 *
 * Runs take the reconcile lock for the preview's duration (one account after the other), as a run does.
 */

export type PreviewChange = 'open' | 'write_off' | 'close' | 'agree' | 'disagree';
export const PREVIEW_CHANGES: readonly PreviewChange[] = ['open', 'write_off', 'close', 'agree', 'disagree'];

export interface PreviewTotal {
  readonly account: string;
  readonly kind: string;
  readonly currency: string | null;
  readonly change: PreviewChange;
  readonly count: number;
  /** Sum of the money at stake (discrepancies' stake: the difference, else the amount), this currency only. */
  readonly cents: number;
}

export interface PreviewItem {
  readonly account: string;
  readonly change: PreviewChange;
  readonly kind: string;
  readonly currency: string | null;
  readonly discrepancy_key: string;
  readonly discrepancy_id: number | null;
  readonly transaction_id: string | null;
  readonly merchant_transaction_id: string | null;
  readonly business_date: string | null;
  readonly difference_cents: number | null;
  /** For agree and disagree: the person's resolution. */
  readonly resolution: string | null;
}

export interface Preview {
  readonly settingsId: number;
  readonly sha256: string;
  readonly asOf: string;
  readonly accounts: readonly {
    account: string;
    from: string;
    to: string;
    version: number;
    proposed: Tolerances['currencies'];
  }[];
  readonly totals: readonly PreviewTotal[];
  /** The first `limit` items, by change, kind, currency, date. */
  readonly items: readonly PreviewItem[];
  readonly itemCount: number;
  readonly seconds: number;
}

/** The account's tolerances with the proposal's currencies in place of its own. */
async function proposedFor(db: Kysely<Database>, proposal: SettingsProposal, account: string) {
  const now = await loadTolerances(db, account);
  const mine = proposal.tolerances.filter((t) => t.account === account);
  const named = new Set(mine.map((t) => t.currency));
  const kept = now.currencies.filter((c) => !named.has(c.currency));
  return { now, proposed: tolerancesOf(now.version + 1, [...kept, ...mine]) };
}

/** Thrown out of the run's transaction once the findings are read: rolls the run back. */
class PreviewRead extends Error {}

/** What each finding and each discrepancy of the history would become (see the module's comment). */
function itemsStatement(ctx: RuleContext) {
  const within = sql.raw(`(f.kind in ('amount_mismatch','fee_mismatch') and f.difference_cents is not null
    and abs(f.difference_cents) <= ${writeOffLimit(ctx.tolerances, 'f.currency')})`);
  return sql`create temp table preview_items on commit drop as
    select * from (
      select case
          when d.resolution in ('accepted','written_off') and d.resolved_by is distinct from ${RECON_ACTOR} then 'agree'
          when d.resolution = 'fixed_in_ledger' then 'disagree'
          when d.discrepancy_id is null or (d.resolved_at is not null and d.resolution is null) then
            case when ${within} then 'write_off' else 'open' end
          when d.resolved_at is null and ${within} then 'write_off'
          when d.resolution = 'written_off' and not ${within} then 'open'
        end as change,
        f.kind, f.currency::text as currency, f.discrepancy_key, d.discrepancy_id, f.transaction_id,
        f.merchant_transaction_id, f.business_date, f.difference_cents, d.resolution,
        abs(coalesce(f.difference_cents, f.expected_amount_cents, f.actual_amount_cents, 0)) as cents
      from findings f
      left join lateral (select * from discrepancies d where d.discrepancy_key = f.discrepancy_key offset 0) d on true
      union all
      select case
          when d.resolved_at is null then 'close'
          when d.resolution in ('accepted','written_off') and d.resolved_by is distinct from ${RECON_ACTOR} then 'disagree'
          when d.resolution = 'fixed_in_ledger' then 'agree'
        end,
        d.kind, d.currency::text, d.discrepancy_key, d.discrepancy_id, d.transaction_id, d.merchant_transaction_id,
        d.business_date, d.difference_cents, d.resolution, coalesce(d.stake_cents, 0)
      from discrepancies d
      where d.business_date between ${ctx.from}::date and ${ctx.to}::date
        and not exists (select 1 from findings f where f.discrepancy_key = d.discrepancy_key)
    ) x where change is not null`;
}

async function previewAccount(
  db: Kysely<Database>,
  req: {
    account: string;
    proposed: Tolerances;
    asOf: string;
    limit: number;
    settings?: Partial<ReconcileSettings>;
  },
) {
  let read:
    { totals: PreviewTotal[]; items: PreviewItem[]; count: number; from: string; to: string } | undefined;
  const inspect = async (ctx: RuleContext) => {
    await sql`analyze findings`.execute(ctx.trx);
    await itemsStatement(ctx).execute(ctx.trx);
    const totals = await sql<PreviewTotal>`
      select ${req.account}::text as account, kind, currency, change, count(*)::int as count, sum(cents)::bigint as cents
      from preview_items group by kind, currency, change order by kind, currency nulls last, change`.execute(
      ctx.trx,
    );
    const items = await sql<PreviewItem>`
      select ${req.account}::text as account, change, kind, currency, discrepancy_key, discrepancy_id::int as discrepancy_id,
        transaction_id, merchant_transaction_id, business_date::text as business_date,
        difference_cents::int as difference_cents, resolution
      from preview_items
      order by array_position(array['disagree','open','write_off','close','agree'], change), kind, currency,
        business_date, discrepancy_key
      limit ${req.limit}`.execute(ctx.trx);
    read = {
      totals: totals.rows.map((r) => ({ ...r, cents: Number(r.cents) })),
      items: items.rows,
      count: totals.rows.reduce((n, r) => n + r.count, 0),
      from: ctx.from,
      to: ctx.to,
    };
    throw new PreviewRead();
  };
  try {
    await reconcileRange(db, {
      account: req.account,
      from: '1970-01-01',
      to: easternDateOf(req.asOf),
      now: req.asOf,
      tolerances: req.proposed,
      ...(req.settings ? { settings: req.settings } : {}),
      beforeLifecycle: inspect,
    });
  } catch (error) {
    if (!(error instanceof PreviewRead)) throw error;
  }
  if (!read)
    throw new Error(`preview of account ${req.account}: the run ended before its findings were read`);
  return read;
}

/**
 * Previews `proposal` over the whole history of each account it names and records the preview in
 * reconcile_settings (the step `recon tolerances apply` requires). Nothing else is written.
 */
export async function previewSettings(
  db: Kysely<Database>,
  proposal: SettingsProposal,
  opts: { by: string; asOf?: string; limit?: number; settings?: Partial<ReconcileSettings> },
): Promise<Preview> {
  const t0 = performance.now();
  const asOf = opts.asOf ?? new Date().toISOString();
  const limit = opts.limit ?? 500;
  const accounts: Preview['accounts'][number][] = [];
  const totals: PreviewTotal[] = [];
  const items: PreviewItem[] = [];
  let itemCount = 0;
  for (const account of [...new Set(proposal.tolerances.map((t) => t.account))].sort()) {
    const { now, proposed } = await proposedFor(db, proposal, account);
    const r = await previewAccount(db, {
      account,
      proposed,
      asOf,
      limit: limit - items.length,
      ...(opts.settings ? { settings: opts.settings } : {}),
    });
    accounts.push({ account, from: r.from, to: r.to, version: now.version, proposed: proposed.currencies });
    totals.push(...r.totals);
    items.push(...r.items);
    itemCount += r.count;
  }
  const seconds = Math.round(performance.now() - t0) / 1000;
  const summary = { asOf, accounts, totals, itemCount, seconds };
  const row = await db
    .insertInto('reconcile_settings')
    .values({
      content_sha256: proposal.sha256,
      content: JSON.stringify({ note: proposal.note, tolerances: proposal.tolerances }),
      previewed_by: opts.by,
      preview: JSON.stringify(summary),
    })
    .returning('settings_id')
    .executeTakeFirstOrThrow();
  return { settingsId: row.settings_id, sha256: proposal.sha256, ...summary, items };
}
