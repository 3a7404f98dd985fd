/**
 * The low-volume check of one account over Eastern days `from`..`to` (docs/operations.md "Low-volume
 * days"): judges each business day of each source against its usual figure (judge-volume.ts) and
 * keeps the outcome in volume_flags: a low day is flagged (again), a flagged day that is no longer low
 * (its rows arrived late) is cleared. Idempotent: a second check of the same data changes only
 * `checked_at`.
 */
import { sql } from 'kysely';
import type { VolumeSettings } from '../../config/volume.ts';
import type { Database, Db } from '../../db/database.ts';
import type { Source } from '../../domain/records.ts';
import { businessDaysBefore } from '../../domain/time/business-days.ts';
import { datesBetween } from '../../domain/time/calendar.ts';
import type { Kysely } from 'kysely';
import { judgeVolume, type VolumeJudgement } from './judge-volume.ts';
import { readSourceDays } from './source-days.ts';

/** A day volume_flags holds open: the rows, the figure they were compared with, and whether it was sent. */
export interface VolumeFlag {
  readonly account: string;
  readonly source: Source;
  readonly day: string;
  readonly rows: number;
  readonly usualRows: number;
  readonly baselineDays: number;
  readonly alerted: boolean;
}

export interface FlagOutcome {
  /** Days judged (loaded business days with enough history), all sources together. */
  readonly judged: number;
  /** Open flags of the account in the range after the check, by day then source. */
  readonly flags: readonly VolumeFlag[];
}

async function writeJudgements(
  trx: Db,
  account: string,
  judged: readonly VolumeJudgement[],
  settings: VolumeSettings,
): Promise<void> {
  const low = judged.filter((j) => j.low);
  if (low.length > 0) {
    // A day flagged again while open keeps its first flag and its alert; a cleared day flagged again
    // is a new flag, to be sent again.
    await trx
      .insertInto('volume_flags')
      .values(
        low.map((j) => ({
          account,
          source: j.source,
          business_date: j.day,
          rows_loaded: j.rows,
          usual_rows: j.usualRows,
          baseline_days: j.baselineDays,
          low_percent: settings.lowPercent,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['account', 'source', 'business_date']).doUpdateSet({
          rows_loaded: (eb) => eb.ref('excluded.rows_loaded'),
          usual_rows: (eb) => eb.ref('excluded.usual_rows'),
          baseline_days: (eb) => eb.ref('excluded.baseline_days'),
          low_percent: (eb) => eb.ref('excluded.low_percent'),
          checked_at: sql`now()`,
          first_flagged_at: sql`case when volume_flags.cleared_at is null then volume_flags.first_flagged_at else now() end`,
          alerted_at: sql`case when volume_flags.cleared_at is null then volume_flags.alerted_at end`,
          cleared_at: null,
        }),
      )
      .execute();
  }
  const fine = judged.filter((j) => !j.low);
  if (fine.length > 0) {
    await sql`update volume_flags f set cleared_at = now(), checked_at = now(), rows_loaded = v.rows,
        usual_rows = v.usual, baseline_days = v.baseline
      from (select * from unnest(${fine.map((j) => j.source)}::text[], ${fine.map((j) => j.day)}::date[],
        ${fine.map((j) => j.rows)}::bigint[], ${fine.map((j) => j.usualRows)}::bigint[],
        ${fine.map((j) => j.baselineDays)}::int[]) as v(source, day, rows, usual, baseline)) v
      where f.account = ${account} and f.source = v.source and f.business_date = v.day
        and f.cleared_at is null`.execute(trx);
  }
}

/** The open flags in `from`..`to`: of `account`, or of every account (the coverage calendar). */
export async function openFlags(
  db: Db,
  account: string | null,
  from: string,
  to: string,
): Promise<VolumeFlag[]> {
  let query = db
    .selectFrom('volume_flags')
    .select([
      'account',
      'source',
      'business_date',
      'rows_loaded',
      'usual_rows',
      'baseline_days',
      'alerted_at',
    ])
    .where('cleared_at', 'is', null)
    .where('business_date', '>=', from)
    .where('business_date', '<=', to);
  if (account !== null) query = query.where('account', '=', account);
  const rows = await query.orderBy('business_date').orderBy('source').orderBy('account').execute();
  return rows.map((r) => ({
    account: r.account,
    source: r.source as Source,
    day: String(r.business_date),
    rows: Number(r.rows_loaded),
    usualRows: Number(r.usual_rows),
    baselineDays: r.baseline_days,
    alerted: r.alerted_at !== null,
  }));
}

/**
 * Judges `account`'s business days `from`..`to` and records the outcome in volume_flags (see the
 * module comment). Reads the baseline before `from` as well; never throws for want of history (a day
 * that cannot be judged yet is left as it is).
 */
export async function flagLowVolume(
  db: Kysely<Database>,
  req: { account: string; from: string; to: string },
  settings: VolumeSettings,
): Promise<FlagOutcome> {
  const earliest = businessDaysBefore(req.from, settings.baselineDays)[0] ?? req.from;
  const sources = await readSourceDays(db, req.account, earliest, req.to);
  const days = datesBetween(req.from, req.to);
  const judged = sources.flatMap((s) => judgeVolume(s, days, settings));
  return db.transaction().execute(async (trx) => {
    await writeJudgements(trx, req.account, judged, settings);
    return { judged: judged.length, flags: await openFlags(trx, req.account, req.from, req.to) };
  });
}
