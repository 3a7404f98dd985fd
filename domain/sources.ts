/**
 * The one table of the provider's sources: for each source the pull fetches, the interface that
 * serves it, its query type, the formats it arrives in, the kinds of record it loads, and the kinds
 * whose warehouse rows carry its name. Everything that maps a source to a query, a query to a source
 * or a record kind to a source reads this table. Pure data (type imports only), so that workflows may
 * import it.
 */

import type {
  AnyRecord,
  LegacyQueryType,
  LoadSource,
  ReportFormat,
  ReportQueryType,
  Source,
} from './records.ts';

export type RecordKind = AnyRecord['kind'];

/**
 * The legacy query interface refuses more than 40 days a query (docs/provider-interface.md 5); a pull
 * and a workflow window cover at most as many, for every source alike.
 */
export const MAX_WINDOW_DAYS = 40;

interface ReportSource {
  readonly api: 'report';
  readonly queryType: ReportQueryType;
  readonly formats: readonly ReportFormat[];
  /** The kind a file of this query type holds. */
  readonly kind: RecordKind;
  /** Kinds whose rows this source writes, with the source's name on them. */
  readonly rows: readonly RecordKind[];
}

interface LegacySource {
  readonly api: 'legacy';
  /** The query type a pull asks for. */
  readonly queryType: LegacyQueryType;
  /** Every query type that answers with this source's data (6 is 5 with more fields allowed). */
  readonly queryTypes: readonly LegacyQueryType[];
  readonly formats: readonly ReportFormat[];
  readonly kind: RecordKind;
  readonly rows: readonly RecordKind[];
}

export type SourceSpec = ReportSource | LegacySource;

export const SOURCE_TABLE: Readonly<Record<Source, SourceSpec>> = {
  'report-transactions': {
    api: 'report',
    queryType: 'TRANSACTION',
    formats: ['report-json', 'report-csv'],
    kind: 'transaction',
    rows: ['transaction'],
  },
  'report-returns': {
    api: 'report',
    queryType: 'RETURN',
    formats: ['report-json', 'report-csv'],
    kind: 'return',
    rows: ['return'],
  },
  'legacy-transactions': {
    api: 'legacy',
    queryType: '5',
    queryTypes: ['5', '6'],
    formats: ['legacy'],
    kind: 'legacy-transaction',
    // A legacy transaction also fills provider_transactions where no report row exists.
    rows: ['legacy-transaction', 'transaction'],
  },
  'legacy-returns': {
    api: 'legacy',
    queryType: '1',
    queryTypes: ['1'],
    formats: ['legacy'],
    kind: 'return',
    rows: ['return'],
  },
  'legacy-adjustments': {
    api: 'legacy',
    queryType: '4',
    queryTypes: ['4'],
    formats: ['legacy'],
    kind: 'adjustment',
    rows: ['adjustment'],
  },
};

const ENTRIES = Object.entries(SOURCE_TABLE) as [Source, SourceSpec][];

/** Every legacy query type the table knows, in ascending order. */
export const LEGACY_QUERY_TYPES: readonly LegacyQueryType[] = ENTRIES.flatMap(([, s]) =>
  s.api === 'legacy' ? s.queryTypes : [],
).sort();

/**
 * The source of a file of `format` answering `queryType` (legacy: '1', '4', '5', '6'; report:
 * 'TRANSACTION', 'RETURN'); undefined when no source serves that combination.
 */
export function sourceOfQuery(format: ReportFormat, queryType: string): Source | undefined {
  return ENTRIES.find(
    ([, s]) =>
      s.formats.includes(format) &&
      (s.api === 'legacy'
        ? (s.queryTypes as readonly string[]).includes(queryType)
        : s.queryType === queryType),
  )?.[0];
}

/** The record kind a legacy query type answers with; undefined for an unknown type. */
export function kindOfLegacyQuery(queryType: string): RecordKind | undefined {
  const source = sourceOfQuery('legacy', queryType);
  return source && SOURCE_TABLE[source].kind;
}

/** The `source` written on rows of a kind: report API rows and legacy rows are told apart by format. */
export function rowSource(kind: RecordKind, legacy: boolean): LoadSource {
  if (kind === 'ledger') return 'ledger';
  const api = legacy ? 'legacy' : 'report';
  const found = ENTRIES.find(([, s]) => s.api === api && s.rows.includes(kind));
  if (!found) throw new RangeError(`no ${api} source writes ${kind} rows`);
  return found[0];
}
