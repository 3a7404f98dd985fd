import { accountOrDefault } from '../../domain/account-name.ts';
import type { Readable } from 'node:stream';
import type { PoolHandle } from '../../db/pool.ts';
import type { AnyRecord, ParsedRow } from '../../domain/records.ts';
import { loadParsedRows, type ParseRows } from './load-rows.ts';
import { parserNotingColumns } from './parsers.ts';
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
  handle: PoolHandle,
  req: LedgerLoadRequest,
  input: Readable,
  parse?: ParseRows,
): Promise<LoadSummary> {
  const { parseRows, carried } = await parserNotingColumns(
    parse,
    (p, onColumns) => (stream) => p.parseLedger(stream, { fileName: req.fileName, onColumns }),
  );
  const account = accountOrDefault(req.account);
  return loadParsedRows(
    handle,
    {
      account,
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
    (stream) => withAccounts(parseRows(stream), account, req),
  );
}

/**
 * Settles each entry's account: its `account` column, else the account whose legacy merchant id is
 * its `merchant_id`, else the load's. An account the configuration does not know is a rejected row.
 */
async function* withAccounts(
  rows: AsyncIterable<ParsedRow<AnyRecord>>,
  fallback: string,
  req: LedgerLoadRequest,
): AsyncGenerator<ParsedRow<AnyRecord>> {
  for await (const row of rows) {
    if (!row.ok || row.record.kind !== 'ledger') {
      yield row;
      continue;
    }
    const { merchant_id: merchantId, ...record } = row.record;
    const named = record.account ?? null;
    if (named !== null && req.knownAccounts && !req.knownAccounts.has(named)) {
      yield {
        ok: false,
        line: row.line,
        raw: row.raw,
        reason: `account '${named}' is not in the accounts configuration (recon accounts list)`,
      };
      continue;
    }
    const mapped = merchantId ? req.accountOfMerchant?.(merchantId) : undefined;
    yield { ...row, record: { ...record, account: named ?? mapped ?? fallback } };
  }
}
