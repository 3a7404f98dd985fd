/**
 * The keys of the new rows the loader COPYs, noted by the loader itself in recon_work.changed_keys
 * (migration 0036): what the insert triggers of migration 0027 would note for the same rows, read
 * from the records in hand instead of from the triggers' transition tables, whose scans were most of
 * what the triggers cost a load (docs/benchmark-record.md §3). A reconcile run reads the keys as
 * sets (reconcile/incremental.ts), so a transaction id that a legacy row and its projection both
 * carry is noted once. `test/integration/changed-keys.test.ts` checks that the keys are those of
 * the rows written.
 */
/** The arrays of recon_work.changed_keys. */
export type KeyArray = 'transaction_ids' | 'merchant_transaction_ids' | 'return_transaction_ids';
/**
 * What the loader notes of the rows it COPYs: their keys, and for provider_transactions their days,
 * which go to provider_transaction_days (migration 0042) instead of the insert trigger's scan.
 */
export type Noted = KeyArray | 'days';

/** Per table the loader COPYs into: the column each kind of key is read from (as migration 0027's triggers). */
export const NOTED_COLUMNS: Readonly<Record<string, readonly (readonly [Noted, string])[]>> = {
  provider_transactions: [
    ['transaction_ids', 'transaction_id'],
    ['merchant_transaction_ids', 'merchant_transaction_id'],
    ['days', 'transaction_on'],
  ],
  legacy_transactions: [['transaction_ids', 'transaction_id']],
  provider_returns: [
    ['return_transaction_ids', 'return_transaction_id'],
    ['transaction_ids', 'original_transaction_id'],
    ['merchant_transaction_ids', 'merchant_transaction_id'],
  ],
};

/** A key to note: the array it goes to and the record field it is read from. */
export interface NotedField {
  readonly array: Noted;
  readonly field: string;
}

/**
 * The fields of a record that a COPY into `table` writes into key columns: `fieldOf` names the
 * record field a column is written from, null when the COPY writes it null (a column the load does
 * not carry), which the triggers do not note either.
 */
export function notedFields(table: string, fieldOf: (column: string) => string | null): NotedField[] {
  const columns = NOTED_COLUMNS[table];
  if (columns === undefined) throw new Error(`the loader notes no keys for ${table}`);
  return columns.flatMap(([array, column]) => {
    const field = fieldOf(column);
    return field === null ? [] : [{ array, field }];
  });
}

/**
 * The keys of one COPY's rows (a chunk and its projection), gathered as the rows are written, and the
 * days of its provider transactions (of `account`, the load's).
 */
export class ChunkKeys {
  private readonly keys: Record<KeyArray, string[]> = {
    transaction_ids: [],
    merchant_transaction_ids: [],
    return_transaction_ids: [],
  };
  private days = new Set<string>();
  private readonly account: string;

  constructor(account: string) {
    this.account = account;
  }

  /** Notes `record`'s keys, as the COPY writes them (a NUL as U+FFFD, copy-text.ts). */
  add(record: Readonly<Record<string, unknown>>, fields: readonly NotedField[]): void {
    for (const { array, field } of fields) {
      const value = record[field];
      if (value === null || value === undefined) continue;
      const text = String(value);
      if (array === 'days') this.days.add(text);
      else this.keys[array].push(text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text);
    }
  }

  /**
   * The statements that write the keys as one row of recon_work.changed_keys and the days into
   * provider_transaction_days, each ended by `; ` (none when there are none): the caller runs them in
   * the COPY's savepoint (rolled back with it), in the same simple query as the savepoint's release,
   * and then {@link clear}s the keys. Each round trip waits for Node to read the answer between two
   * runs of its parser, and a loaded machine makes that wait long (docs/benchmark-record.md §3, the
   * overlap).
   */
  statements(): string {
    const { transaction_ids: t, merchant_transaction_ids: m, return_transaction_ids: r } = this.keys;
    const insert =
      t.length + m.length + r.length === 0
        ? ''
        : `insert into recon_work.changed_keys (transaction_ids, merchant_transaction_ids, return_transaction_ids)
        values (${textArray(t)}, ${textArray(m)}, ${textArray(r)}); `;
    const days =
      this.days.size === 0
        ? ''
        : `insert into provider_transaction_days (account, transaction_on)
        select ${textLiteral(this.account)}, unnest(${textArray([...this.days])}::date[]) on conflict do nothing; `;
    return `${insert}${days}`;
  }

  clear(): void {
    this.keys.transaction_ids = [];
    this.keys.merchant_transaction_ids = [];
    this.keys.return_transaction_ids = [];
    this.days = new Set();
  }
}

/**
 * The text[] literal of `keys` (null when there are none), every key quoted: the driver's own
 * conversion of an array escapes each element in turn, about 8 ms for a COPY's 10,000 keys against
 * 2-3 ms for one join (a tenth of a second of Node's CPU per 100,000 legacy lines, load 10). Only a
 * key holding a quote or a backslash needs escaping.
 */
function arrayLiteral(keys: readonly string[]): string | null {
  if (keys.length === 0) return null;
  const escaped = /["\\]/.test(keys.join('')) ? keys.map((k) => k.replace(/["\\]/g, '\\$&')) : keys;
  return `{"${escaped.join('","')}"}`;
}

/**
 * `text` as a string constant in SQL: quotes doubled; an escape string with backslashes doubled when
 * it holds one, whatever standard_conforming_strings says.
 */
export function textLiteral(text: string): string {
  const quoted = text.replaceAll("'", "''");
  return text.includes('\\') ? `E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

/** `keys` as a text[] in SQL: their {@link arrayLiteral} as a {@link textLiteral}, or null. */
export function textArray(keys: readonly string[]): string {
  const literal = arrayLiteral(keys);
  return literal === null ? 'null::text[]' : `${textLiteral(literal)}::text[]`;
}
