/**
 * Merchant ledger files (docs/connecting-a-provider.md, "Your ledger"): CSV with a header of merchant_ledger column names,
 * or NDJSON objects with the same names; told apart by the first non-blank byte (`{` is NDJSON).
 *
 * Validation is the migration's checks: merchant_transaction_id 1-30 characters; transaction_type
 * DEBIT, CREDIT, RETURN, ADJUSTMENT or REPRESENTMENT; amount_cents a non-negative whole number of cents
 * (CSV: digits; NDJSON: a JSON integer, or a string of digits, as exports of bigint columns often
 * write it), signed for an ADJUSTMENT (a leading '-'; fee_cents too), as the provider's adjustment is; currency three
 * uppercase letters; status a canonical status; booked_at ISO-8601 with `Z` or an offset (a local time
 * without zone is ambiguous and refused), stored as UTC to the microsecond. Optional columns may be
 * absent or empty. Unknown columns are ignored (they stay in `raw`). A row that fails is a rejected
 * row naming the column; an empty file yields nothing; a CSV without a required column throws
 * UnreadableInput naming it.
 */

import { accountNameProblem } from '../../domain/account-name.ts';
import { UnreadableInput } from '../../domain/errors.ts';
import { describeHeader, describeJsonError } from '../../domain/privacy.ts';
import {
  CANONICAL_STATUSES,
  type CanonicalStatus,
  type LedgerRecord,
  type OnColumns,
  type ParsedRow,
} from '../../domain/records.ts';
import { normaliseInstant } from '../../domain/time/iso-instant.ts';
import { digitsToCents, jsonToCents } from '../../domain/money.ts';
import { readCsvRecords, rejectedRecord } from './read-csv-records.ts';
import { isBlank, readLines } from './read-lines.ts';

export type LedgerFormat = 'ledger-csv' | 'ledger-ndjson';

/** The ledger's transaction types (migration 0029): what the merchant booked. */
const LEDGER_TYPES = ['DEBIT', 'CREDIT', 'RETURN', 'ADJUSTMENT', 'REPRESENTMENT'] as const;
type LedgerType = (typeof LEDGER_TYPES)[number];

const REQUIRED = [
  'merchant_transaction_id',
  'transaction_type',
  'amount_cents',
  'currency',
  'status',
  'booked_at',
] as const;
const OPTIONAL = [
  'transaction_id',
  'original_merchant_transaction_id',
  'merchant_user_id',
  'product',
  'fee_cents',
  'description',
  'account',
  'merchant_id',
] as const;

const KNOWN_COLUMNS = [...REQUIRED, ...OPTIONAL];

class Problem extends Error {}

/** Parses a ledger stream whose format is already known (see {@link detectLedgerFormat}). */
export async function* parseLedgerStream(
  input: AsyncIterable<Buffer | string>,
  format: LedgerFormat,
  fileName: string,
  onColumns?: OnColumns,
): AsyncGenerator<ParsedRow<LedgerRecord>> {
  if (format === 'ledger-ndjson') {
    // An optional column is carried when an object of the file has its key (a file of objects
    // without `description` says nothing about descriptions).
    // Reported before the first object, and again before the first object with another optional key:
    // the loader merges rows while it reads, each with the columns reported so far.
    const seen = new Set<string>();
    const report = () => onColumns?.('ledger', [...REQUIRED, ...OPTIONAL.filter((c) => seen.has(c))]);
    report();
    for await (const batch of readLines(input, fileName)) {
      for (let i = 0; i < batch.lines.length; i++) {
        const raw = batch.lines[i] as string;
        if (isBlank(raw)) continue;
        const line = batch.first + i;
        let value: unknown;
        try {
          value = JSON.parse(raw);
        } catch (error) {
          yield { ok: false, line, raw, reason: `not a JSON object: ${describeJsonError(error)}` };
          continue;
        }
        if (typeof value !== 'object' || value === null || Array.isArray(value)) {
          yield { ok: false, line, raw, reason: 'not a JSON object' };
          continue;
        }
        const o = value as Record<string, unknown>;
        if (seen.size < OPTIONAL.length) {
          const before = seen.size;
          for (const c of OPTIONAL) if (o[c] !== undefined) seen.add(c);
          if (seen.size !== before) report();
        }
        yield row(o, raw, line, 'json');
      }
    }
    return;
  }
  let header: Map<string, number> | null = null;
  let width = 0;
  for await (const batch of readCsvRecords(input, fileName)) {
    for (const rec of batch) {
      if (header === null) {
        if (rec.fields === null)
          throw new UnreadableInput(fileName, rec.line, 'the header row has malformed quoting');
        header = new Map();
        for (const [i, name] of rec.fields.entries()) {
          const key = name.trim().toLowerCase();
          if (!header.has(key)) header.set(key, i);
        }
        const missing = REQUIRED.filter((c) => !header?.has(c));
        if (missing.length > 0) {
          throw new UnreadableInput(
            fileName,
            rec.line,
            `the ledger CSV header lacks required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (${describeHeader(rec.fields, (name) => (KNOWN_COLUMNS as readonly string[]).includes(name.trim().toLowerCase()))})`,
          );
        }
        width = rec.fields.length;
        const present = header;
        onColumns?.('ledger', [...REQUIRED, ...OPTIONAL.filter((c) => present.has(c))]);
        continue;
      }
      if (rec.fields === null) {
        yield rejectedRecord(rec, 'malformed quoting');
        continue;
      }
      if (rec.fields.length !== width) {
        yield rejectedRecord(rec, `expected ${width} fields as in the header, found ${rec.fields.length}`);
        continue;
      }
      const values: Record<string, unknown> = {};
      for (const [name, i] of header) values[name] = rec.fields[i];
      yield row(values, rec.raw, rec.line, 'csv');
    }
  }
}

/** `{` as the first non-blank byte means NDJSON; anything else is CSV. */
export function detectLedgerFormat(head: Uint8Array): LedgerFormat {
  for (const byte of head) {
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d) continue;
    if (byte === 0xef || byte === 0xbb || byte === 0xbf) continue; // UTF-8 byte-order mark
    return byte === 0x7b ? 'ledger-ndjson' : 'ledger-csv';
  }
  return 'ledger-csv';
}

function row(
  o: Record<string, unknown>,
  raw: string,
  line: number,
  from: 'csv' | 'json',
): ParsedRow<LedgerRecord> {
  try {
    return { ok: true, line, raw, record: record(o, from) };
  } catch (error) {
    if (error instanceof Problem) return { ok: false, line, raw, reason: error.message };
    throw error;
  }
}

function record(o: Record<string, unknown>, from: 'csv' | 'json'): LedgerRecord {
  const mtid = text(o, 'merchant_transaction_id');
  if (mtid === null || mtid.length > 30) {
    throw new Problem(
      `merchant_transaction_id must be 1-30 characters (got ${mtid === null ? 'none' : `${mtid.length}`})`,
    );
  }
  const type = text(o, 'transaction_type');
  if (!LEDGER_TYPES.includes(type as LedgerType)) {
    throw new Problem(`transaction_type '${type ?? ''}' is not ${LEDGER_TYPES.join(', ')}`);
  }
  const signed = type === 'ADJUSTMENT';
  const currency = text(o, 'currency');
  if (currency === null || !/^[A-Z]{3}$/.test(currency)) {
    throw new Problem(`currency '${currency ?? ''}' is not three uppercase letters (ISO 4217)`);
  }
  const status = text(o, 'status');
  if (!CANONICAL_STATUSES.includes(status as CanonicalStatus)) {
    throw new Problem(`status '${status ?? ''}' is not one of ${CANONICAL_STATUSES.join(', ')}`);
  }
  const bookedAt = text(o, 'booked_at');
  let booked: string;
  try {
    if (bookedAt === null) throw new RangeError('it is missing');
    booked = normaliseInstant(bookedAt, { requireZone: true });
  } catch (error) {
    throw new Problem(`booked_at: ${(error as Error).message}`);
  }
  const amount = cents(o, 'amount_cents', from, signed);
  if (amount === null) throw new Problem('amount_cents is missing');
  return {
    kind: 'ledger',
    merchant_transaction_id: mtid,
    transaction_type: type as LedgerType,
    amount_cents: amount,
    currency,
    status: status as CanonicalStatus,
    booked_at: booked,
    transaction_id: text(o, OPTIONAL[0]),
    original_merchant_transaction_id: text(o, OPTIONAL[1]),
    merchant_user_id: text(o, OPTIONAL[2]),
    product: text(o, OPTIONAL[3]),
    fee_cents: cents(o, 'fee_cents', from, signed),
    description: text(o, OPTIONAL[5]),
    ...optionalAccount(o),
  };
}

/** `account` and `merchant_id` only when the entry has them: most ledgers name no account. */
function optionalAccount(o: Record<string, unknown>): { account?: string; merchant_id?: string } {
  const account = accountName(o);
  const merchantId = text(o, OPTIONAL[7]);
  return {
    ...(account !== null ? { account } : {}),
    ...(merchantId !== null ? { merchant_id: merchantId } : {}),
  };
}

function accountName(o: Record<string, unknown>): string | null {
  const name = text(o, OPTIONAL[6]);
  const problem = name === null ? null : accountNameProblem(name);
  if (problem !== null) throw new Problem(problem);
  return name;
}

function text(o: Record<string, unknown>, name: string): string | null {
  const v = o[name];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new Problem(`${name} is not a string`);
}

/**
 * A whole number of cents. `signed` (an ADJUSTMENT's amount and fee) allows a leading '-' or a
 * negative JSON integer: a provider adjustment takes money back as often as it gives.
 */
function cents(
  o: Record<string, unknown>,
  name: string,
  from: 'csv' | 'json',
  signed = false,
): number | null {
  const v = o[name];
  if (v === undefined || v === null || v === '') return null;
  if (signed) {
    const negative = (typeof v === 'string' && v.startsWith('-')) || (typeof v === 'number' && v < 0);
    if (negative) {
      const magnitude = typeof v === 'string' ? v.slice(1) : -v;
      const n = cents({ [name]: magnitude }, name, from);
      if (n === null) throw new Problem(`${name}: '-' alone is not a number of cents`);
      return n === 0 ? 0 : -n;
    }
  }
  try {
    return typeof v === 'string'
      ? digitsToCents(v)
      : from === 'json'
        ? jsonToCents(v)
        : digitsToCents(String(v));
  } catch (error) {
    throw new Problem(`${name}: ${(error as Error).message}`);
  }
}
