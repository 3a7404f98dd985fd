import { ConfigError } from '../../domain/errors.ts';
import type { ReportFormat, Source } from '../../domain/records.ts';
import { sourceOfQuery } from '../../domain/sources.ts';

export const REPORT_FORMATS: readonly ReportFormat[] = ['legacy', 'report-json', 'report-csv'];

/** The options of `recon parse` / `recon import`, checked and normalised. */
export interface ReportFileOptions {
  format: ReportFormat;
  queryType?: string;
  fields?: number[];
  source: Source;
}

/**
 * Checks --format, --query-type and --fields together and derives the load source: legacy 5/6 →
 * legacy-transactions, 1 → legacy-returns, 4 → legacy-adjustments; report TRANSACTION →
 * report-transactions, RETURN → report-returns. A report JSON without query type may mix transactions
 * and returns; it is recorded as report-transactions and both kinds load.
 * Throws {@link ConfigError} (exit code 2) saying which option to fix.
 */
export function reportFileOptions(o: {
  format?: string;
  queryType?: string;
  fields?: string;
}): ReportFileOptions {
  const format = o.format as ReportFormat;
  if (!REPORT_FORMATS.includes(format)) {
    throw new ConfigError(
      `--format ${JSON.stringify(o.format ?? '')} is not valid: use ${REPORT_FORMATS.join(', ')}`,
    );
  }
  const queryType = o.queryType?.trim().toUpperCase() || undefined;
  let fields: number[] | undefined;
  if (o.fields !== undefined) {
    if (format !== 'legacy' || (queryType !== '5' && queryType !== '6')) {
      throw new ConfigError('--fields applies only to --format legacy with --query-type 5 or 6');
    }
    fields = o.fields.split(',').map((f) => {
      const n = Number(f.trim());
      if (!/^\d+$/.test(f.trim()) || n < 1 || n > 22) {
        throw new ConfigError(
          `--fields ${JSON.stringify(o.fields)}: ${JSON.stringify(f)} is not a field number 1-22`,
        );
      }
      return n;
    });
    if (new Set(fields).size !== fields.length) {
      throw new ConfigError(`--fields ${JSON.stringify(o.fields)} lists a field twice`);
    }
  }
  if (format === 'legacy') {
    const source = queryType === undefined ? undefined : sourceOfQuery(format, queryType);
    if (!source) {
      throw new ConfigError(
        `--format legacy needs --query-type 1, 4, 5 or 6 (got ${JSON.stringify(o.queryType ?? '')})`,
      );
    }
    return { format, queryType, fields, source };
  }
  const source =
    queryType === undefined && format === 'report-json'
      ? sourceOfQuery(format, 'TRANSACTION')
      : queryType && sourceOfQuery(format, queryType);
  if (source) return { format, queryType, fields, source };
  throw new ConfigError(
    `--format ${format} needs --query-type TRANSACTION or RETURN (got ${JSON.stringify(o.queryType ?? '')})`,
  );
}
