import { accountOrDefault } from '../../domain/account-name.ts';
import type { Readable } from 'node:stream';
import type { PoolHandle } from '../../db/pool.ts';
import { loadParsedRows, type ParseRows } from './load-rows.ts';
import { parserNotingColumns } from './parsers.ts';
import { kindOfLegacyQuery, type RecordKind } from '../../domain/sources.ts';
import type { LoadSummary } from '../../domain/load-summary.ts';
import type { LoadRequest } from './types.ts';

export type { LoadRequest } from './types.ts';

/**
 * Loads one provider report (legacy CSV, report JSON or CSV, zipped or not) into the warehouse.
 *
 * - Idempotent: loading the same data again changes no warehouse row and adds only a `loads` row
 *   (its rows counted as rows_unchanged). A restated row (new status, changed fee) is updated and its
 *   earlier version kept in row_history.
 * - The same data in another format is not a restatement: a column the input's format does not carry
 *   (the parser reports which it does) keeps its stored value and is not compared; a format that does
 *   carry a column still unknown fills it in without counting as a restatement.
 * - Whole or nothing: on any error nothing of this load is kept, the `loads` row says `failed` with
 *   the error, and the error is rethrown (UnreadableInput for a file broken beyond its rows).
 * - Refuses (EnvironmentMismatch, before writing anything) data of another environment than the
 *   warehouse's; the first load fixes the warehouse's environment.
 * - Report API rows take precedence over legacy rows for the same transaction or return id. A legacy
 *   type 5/6 load always updates legacy_transactions and fills provider_transactions where no report
 *   row exists. A report JSON mixing transactions and returns loads both.
 * - Duplicate keys in one file: the last occurrence wins; every occurrence counts in rows_loaded.
 * - Rows that fail to parse go to rejected_rows with their line and reason; the rest loads.
 */
export async function loadReport(
  handle: PoolHandle,
  req: LoadRequest,
  input: Readable,
  parse?: ParseRows,
): Promise<LoadSummary> {
  const legacy = req.format === 'legacy';
  const kinds = new Set<RecordKind>(
    legacy ? [kindOfLegacyQuery(req.queryType ?? '5') ?? 'legacy-transaction'] : ['transaction', 'return'],
  );
  const { parseRows, carried } = await parserNotingColumns(
    parse,
    (p, onColumns) => (stream) =>
      p.parseReport(stream, {
        format: req.format,
        queryType: req.queryType,
        fields: req.fields,
        fileName: req.fileName,
        onColumns,
      }),
  );
  return loadParsedRows(
    handle,
    {
      account: accountOrDefault(req.account),
      source: req.source,
      format: req.format,
      queryType: req.queryType,
      responseFields: req.fields?.join(','),
      fileName: req.fileName,
      origin: req.origin,
      environment: req.environment,
      window: req.window,
      workflowId: req.workflowId,
      maxRejected: req.maxRejected,
      maxRejectedSetting: req.maxRejectedSetting,
      legacy,
      kinds,
      carried,
      onProgress: req.onProgress,
      signal: req.signal,
      batchRows: req.batchRows,
    },
    input,
    parseRows,
  );
}
