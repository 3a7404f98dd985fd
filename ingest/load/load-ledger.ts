import type { Readable } from 'node:stream';
import type { DatabaseHandle } from '../../db/connect.ts';
import { loadParsedRows, type ParseRows } from './load-rows.ts';
import { loadParsers } from './parsers.ts';
import type { RecordKind } from '../../domain/sources.ts';
import type { LedgerLoadRequest } from './types.ts';
import type { LoadSummary } from '../../domain/load-summary.ts';

export type { LedgerLoadRequest } from './types.ts';

/**
 * Loads merchant ledger entries (CSV with a header, or NDJSON: detected from the content) into
 * merchant_ledger, keyed by merchant_transaction_id. Same guarantees as loadReport: idempotent, whole
 * or nothing, changed entries keep their earlier version in row_history, rejected lines go to
 * rejected_rows, another environment is refused. An optional column the file does not have (absent
 * from the CSV header, or from every NDJSON object) keeps its stored value.
 */
export async function loadLedger(
  handle: DatabaseHandle,
  req: LedgerLoadRequest,
  input: Readable,
  parse?: ParseRows,
): Promise<LoadSummary> {
  // Filled by the parser (the CSV header, the NDJSON keys), read by the merge.
  const carried = new Map<RecordKind, readonly string[]>();
  const parseRows: ParseRows =
    parse ??
    (await loadParsers().then(
      (p) => (stream: Readable) =>
        p.parseLedger(stream, {
          fileName: req.fileName,
          onColumns: (kind, columns) => carried.set(kind, columns),
        }),
    ));
  return loadParsedRows(
    handle,
    {
      source: 'ledger',
      format: (input) => (input.firstChar === '{' ? 'ledger-ndjson' : 'ledger-csv'),
      fileName: req.fileName,
      origin: req.origin,
      environment: req.environment,
      workflowId: req.workflowId,
      maxRejected: req.maxRejected,
      legacy: false,
      kinds: new Set(['ledger']),
      carried,
      onProgress: req.onProgress,
      signal: req.signal,
    },
    input,
    parseRows,
  );
}
