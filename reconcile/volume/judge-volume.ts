/**
 * The judgement of the low-volume check, without I/O: given a source's rows per Eastern day, the days
 * a load of the source covered whole, and the day of its first data, which business days held far
 * fewer rows than usual (config/volume.ts, docs/operations.md "Low-volume days").
 *
 * "Usual" is the median of the rows of the loaded business days among the `baselineDays` business
 * days before the day, leaving out days before the source's first data (a source that started last
 * week is compared with last week only) and days no load covered (an unloaded day is unknown, not
 * zero). The median, not the mean, so that one holiday-like quiet day or one bulk day in the baseline
 * does not move the figure; rows are whole numbers, and the median of an even count is the mean of
 * the two middle values rounded down.
 */
import type { VolumeSettings } from '../../config/volume.ts';
import type { Source } from '../../domain/records.ts';
import { businessDaysBefore, isBusinessDay } from '../../domain/time/business-days.ts';

/** What the warehouse says of one source of one account around the days to judge. */
export interface SourceDays {
  readonly source: Source;
  /** Rows per Eastern day (days absent hold none). */
  readonly rows: ReadonlyMap<string, number>;
  /** Days a committed load of the source covered after the day had ended. */
  readonly loaded: ReadonlySet<string>;
  /** The first Eastern day with a row of the source, or null when it has none. */
  readonly firstDataDay: string | null;
}

/** One judged day: a business day that was loaded and had enough history to compare with. */
export interface VolumeJudgement {
  readonly source: Source;
  readonly day: string;
  readonly rows: number;
  readonly usualRows: number;
  readonly baselineDays: number;
  /** Whether the day is flagged: the source usually has volume and the day held too little. */
  readonly low: boolean;
}

/** The median of whole numbers (the mean of the two middle values, rounded down, for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : Math.floor((sorted[mid - 1]! + sorted[mid]!) / 2);
}

/** Whether `rows` is far less than `usual`: integer arithmetic only (rows × 100 < usual × percent). */
export function isLow(rows: number, usual: number, settings: VolumeSettings): boolean {
  return usual >= settings.minUsualRows && rows * 100 < usual * settings.lowPercent;
}

/**
 * Judges each of `days` that is a business day, was loaded, and has at least `minHistoryDays`
 * loaded baseline days; other days are left out (they cannot be judged yet). `low` is false for a
 * source whose usual figure is below `minUsualRows`.
 */
export function judgeVolume(
  source: SourceDays,
  days: readonly string[],
  settings: VolumeSettings,
): VolumeJudgement[] {
  const out: VolumeJudgement[] = [];
  if (source.firstDataDay === null || settings.lowPercent === 0) return out;
  const first = source.firstDataDay;
  for (const day of days) {
    if (!isBusinessDay(day) || !source.loaded.has(day) || day < first) continue;
    const baseline = businessDaysBefore(day, settings.baselineDays).filter(
      (d) => d >= first && source.loaded.has(d),
    );
    if (baseline.length < settings.minHistoryDays) continue;
    const rows = source.rows.get(day) ?? 0;
    const usualRows = median(baseline.map((d) => source.rows.get(d) ?? 0));
    out.push({
      source: source.source,
      day,
      rows,
      usualRows,
      baselineDays: baseline.length,
      low: isLow(rows, usualRows, settings),
    });
  }
  return out;
}
