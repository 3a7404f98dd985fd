import { addDays } from '../../domain/time/calendar.ts';
import { easternDateOfMs, easternOffsetChangeOn } from '../../domain/time/eastern.ts';
import { easternWallTime, HOUR_MICROS, isoMicros, parseIsoMicros } from '../formats/eastern-clock.ts';
import type {
  AddedTransaction,
  Channel,
  HistoryAdjustment,
  HistoryOptions,
  HistoryReturn,
  HistoryTransaction,
  Outcome,
} from './types.ts';

/** How transaction `i` of a history is drawn from its seed: the rates and codes of sandbox/history.ts. */

/** What the generator needs of a history: its seed, id tag and the Eastern days it spans. */
export interface HistoryLayout {
  readonly options: Required<HistoryOptions>;
  /** The seed as a 32-bit number. */
  readonly seed: number;
  /** Three base-36 characters of the seed, in every id. */
  readonly tag: string;
  /** Start of each Eastern day from `from`, microseconds; one more than the days (the end). */
  readonly dayStartUs: readonly number[];
  dayOfIndex(i: number): number;
}

const RETURN_CODES = ['901', '903', '905', '907', '910', '912', '914', '915'] as const;
const REGIONS = ['ON', 'QC', 'BC', 'AB', 'MB', 'NS', 'SK', 'NB'] as const;
const DEVICES = ['DESKTOP', 'MOBILE', 'TABLET', 'UNKNOWN'] as const;
const BANKS = ['Maple Bank', 'Northern Trust Co-op', 'Prairie Credit Union', 'Harbour Bank'] as const;
const REJECT_CODES = [
  ['E101', 'Declined by risk management'],
  ['E302', 'Consumer must re-authenticate with the bank'],
  ['E205', 'Consumer bank account not eligible'],
] as const;
const FAIL_CODES = [
  ['E500', 'Internal processing error'],
  ['E110', 'Validation error: account information incomplete'],
] as const;
const DAY_MICROS = 24 * HOUR_MICROS;

export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < text.length; k++) {
    h ^= text.charCodeAt(k);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A 32-bit hash of (seed, i, salt): murmur3's finaliser over a simple combination. */
function mix(seed: number, i: number, salt: number): number {
  let h = (seed ^ Math.imul(i + 1, 0x9e3779b1) ^ Math.imul(salt + 1, 0x85ebca6b)) >>> 0;
  h ^= Math.floor(i / 0x1_0000_0000);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function transition(layout: HistoryLayout, d: number): { atUs: number; fall: boolean } | null {
  const change = easternOffsetChangeOn(easternDateOfMs(Math.floor(layout.dayStartUs[d]! / 1000)));
  return change && { atUs: change.atMs * 1000, fall: change.fallBack };
}

/** Transaction `i` of the generated history: a pure function of the seed and `i`. */
export function generateTransaction(layout: HistoryLayout, i: number): HistoryTransaction {
  const { seed, tag, options } = layout;
  const r = (salt: number) => mix(seed, i, salt);
  const u = (salt: number) => r(salt) / 0x1_0000_0000;
  const d = layout.dayOfIndex(i);
  const channelDraw = u(1);
  const channel: Channel = channelDraw < 0.75 ? 'report' : channelDraw < 0.9 ? 'legacy' : 'both';
  const atUs = receivedAtUs(layout, d, channel, { r, u });
  const type = u(6) < 0.7 ? 'DEBIT' : 'CREDIT';
  const amountDraw = r(7);
  const amountCents =
    amountDraw % 997 === 0
      ? 100
      : amountDraw % 991 === 0
        ? 100_000_000
        : 100 + Math.floor(u(8) * u(8) * 499_900);
  const currency = options.currency ?? (u(9) < 0.04 ? 'USD' : 'CAD');
  const outcomeDraw = u(10);
  // Transactions both sources show are successful: the legacy status code cannot say REJECTED apart
  // from FAILED, so a comparison would flag them all.
  const outcome: Outcome =
    channel === 'both'
      ? 'SUCCESSFUL'
      : outcomeDraw < 0.08
        ? 'REJECTED'
        : outcomeDraw < 0.11
          ? 'FAILED'
          : 'SUCCESSFUL';
  const pending = channel === 'report' && u(11) < 0.1;
  // Most pending transactions settle within 1-3 days; one in ten takes 5 to 59 days, so that the nightly
  // follow-up has transactions to follow to their end, and some are still pending weeks later.
  const pendingDays = u(38) < 0.1 ? 5 + (r(39) % 55) : 1 + (r(12) % 3);
  const settledAtUs = pending ? atUs + pendingDays * DAY_MICROS + (r(13) % 3600) * 1_000_000 : atUs;
  const feeCents =
    outcome === 'SUCCESSFUL'
      ? (type === 'DEBIT' ? 25 : 40) +
        Math.floor((amountCents * 3) / 1000) +
        (u(40) < options.feeOneCentOffRate ? 1 : 0)
      : 0;
  const err =
    outcome === 'REJECTED'
      ? REJECT_CODES[r(14) % REJECT_CODES.length]!
      : outcome === 'FAILED'
        ? FAIL_CODES[r(14) % FAIL_CODES.length]!
        : null;
  const notifyDraw = u(15);
  const notifyStatus = notifyDraw < 0.9 ? 'C' : notifyDraw < 0.96 ? 'S' : 'I';
  const idDigits = String(i).padStart(10, '0');
  const last4 = String(r(16) % 10000).padStart(4, '0');

  // A transaction pending for weeks is not returned as well: its story is long enough.
  const ret =
    outcome === 'SUCCESSFUL' && !(pending && pendingDays >= 5) && u(17) < (type === 'DEBIT' ? 0.04 : 0.01)
      ? generatedReturn(tag, idDigits, settledAtUs, amountCents, { r, u })
      : null;
  const adjustment = u(24) < 0.02 ? generatedAdjustment(tag, idDigits, atUs, amountCents, { r, u }) : null;
  return {
    index: i,
    transactionId: `T${tag}${idDigits}`,
    merchantTransactionId: `MT-${options.merchantTransactionTag}-${idDigits}`,
    merchantUserId: `U${String(r(30) % 100_000_000).padStart(8, '0')}`,
    productUserId: `PU${String(r(30) % 100_000_000).padStart(8, '0')}`,
    type,
    amountCents,
    feeCents,
    currency,
    at: isoMicros(atUs),
    atMicros: atUs,
    on: easternWallTime(atUs).date,
    outcome,
    settledAt: isoMicros(settledAtUs),
    settledAtMicros: settledAtUs,
    errorCode: err ? err[0] : null,
    errorMessage: err ? err[1] : null,
    notifyStatus,
    channel,
    region: REGIONS[r(31) % REGIONS.length]!,
    countryCode: 'CA',
    externalReference: `X${tag}${idDigits}`,
    deviceType: DEVICES[r(32) % DEVICES.length]!,
    requestType: type === 'DEBIT' ? 'PAYIN' : 'PAYOUT',
    consumerEmail: `consumer${r(30) % 100_000_000}@example.com`,
    bankAccountMasked: `XXX-XXXXX-XXXXXXX${last4}`,
    accountToken: `AT${r(33).toString(16).padStart(8, '0')}${r(34).toString(16).padStart(8, '0')}`,
    accountLabel: `****${last4}`,
    accountType: r(35) % 3 === 0 ? 'PS' : 'PC',
    bankName: BANKS[r(36) % BANKS.length]!,
    return: ret,
    adjustment,
    legacyConflict: channel === 'both' && u(37) < options.legacyConflictRate,
  };
}

/** The draws of one transaction: `r(salt)` a 32-bit number, `u(salt)` in [0, 1), each a pure function of the seed, the index and the salt. */
interface Draws {
  r(salt: number): number;
  u(salt: number): number;
}

/**
 * When transaction `d`'s day received it, microseconds: anywhere in the day, or within an hour of a
 * daylight-saving change on one in eight of that day's transactions.
 */
function receivedAtUs(layout: HistoryLayout, d: number, channel: Channel, { r, u }: Draws): number {
  const start = layout.dayStartUs[d]!;
  const length = layout.dayStartUs[d + 1]! - start;
  const micros = r(3) % 1_000_000;
  let atUs = start + Math.floor(u(2) * (length / 1_000_000)) * 1_000_000 + micros;
  const dst = transition(layout, d);
  if (dst && r(4) % 8 === 0) {
    // Within an hour either side of the change: around the skipped hour, or inside the repeated one.
    atUs = dst.atUs - HOUR_MICROS + Math.floor(u(5) * 7200) * 1_000_000 + micros;
  }
  if (dst?.fall && channel !== 'report' && atUs >= dst.atUs && atUs < dst.atUs + HOUR_MICROS) {
    atUs -= HOUR_MICROS; // same wall time on the daylight side: the legacy CSV reads it back exactly
  }
  return atUs;
}

/** The return of a successful transaction, 2 to 6 days after it settled. */
function generatedReturn(
  tag: string,
  idDigits: string,
  settledAtUs: number,
  amountCents: number,
  { r }: Draws,
): HistoryReturn {
  const returnedAtUs = settledAtUs + (2 + (r(18) % 5)) * DAY_MICROS + (r(19) % 7200) * 1_000_000;
  const returnedOn = easternWallTime(returnedAtUs).date;
  return {
    returnTransactionId: `R${tag}${idDigits}`,
    returnedAt: isoMicros(returnedAtUs),
    returnedAtMicros: returnedAtUs,
    returnedOn,
    returnCode: RETURN_CODES[r(20) % RETURN_CODES.length]!,
    nextActionDate: r(21) % 2 === 0 ? addDays(returnedOn, 5) : null,
    representment: r(21) % 2 === 0 && r(38) % 4 === 0,
    settlementCode: `S${String(r(22) % 100000).padStart(5, '0')}`,
    amountCents,
    externalReference: `XR${tag}${idDigits}`,
    notifyStatus: r(23) % 10 === 0 ? 'S' : 'C',
  };
}

/** An adjustment 1 to 3 days after the transaction: of its fee, or of its amount. */
function generatedAdjustment(
  tag: string,
  idDigits: string,
  atUs: number,
  amountCents: number,
  { r }: Draws,
): HistoryAdjustment {
  const fee = r(25) % 2 === 0;
  return {
    adjustedOn: addDays(easternWallTime(atUs).date, 1 + (r(26) % 3)),
    adjustmentType: fee ? 'F' : 'A',
    amountCents: fee ? 0 : -(1 + (r(27) % Math.max(1, Math.floor(amountCents / 10)))),
    feeCents: fee ? -(1 + (r(28) % 25)) : 0,
    notes: fee
      ? `Fee correction for transaction T${tag}${idDigits}`
      : `Amount correction ticket ${r(29) % 100000}`,
  };
}

/** A transaction added now (the interactive endpoint): settled at once, report channel only. */
export function addedTransaction(tag: string, index: number, tx: AddedTransaction): HistoryTransaction {
  const atUs = tx.at ? parseIsoMicros(tx.at) : Date.now() * 1000;
  const idDigits = String(index).padStart(10, '0');
  const ok = tx.amountCents >= 100 && tx.amountCents <= 100_000_000;
  const f: HistoryTransaction = {
    index,
    transactionId: `T${tag}${idDigits}`,
    merchantTransactionId: tx.merchantTransactionId,
    merchantUserId: tx.merchantUserId,
    productUserId: `PU${idDigits.slice(2)}`,
    type: tx.type,
    amountCents: tx.amountCents,
    feeCents: ok ? (tx.type === 'DEBIT' ? 25 : 40) + Math.floor((tx.amountCents * 3) / 1000) : 0,
    currency: tx.currency,
    at: isoMicros(atUs),
    atMicros: atUs,
    on: easternWallTime(atUs).date,
    outcome: ok ? 'SUCCESSFUL' : 'REJECTED',
    settledAt: isoMicros(atUs),
    settledAtMicros: atUs,
    errorCode: ok ? null : 'E120',
    errorMessage: ok ? null : 'transactionAmount outside 100..100000000',
    notifyStatus: 'S',
    channel: 'report',
    region: tx.region ?? 'ON',
    countryCode: tx.countryCode ?? 'CA',
    externalReference: `X${tag}${idDigits}`,
    deviceType: 'DESKTOP',
    requestType: tx.type === 'DEBIT' ? 'PAYIN' : 'PAYOUT',
    consumerEmail: 'interactive@example.com',
    bankAccountMasked: 'XXX-XXXXX-XXXXXXX0000',
    accountToken: `AT${idDigits}`,
    accountLabel: '****0000',
    accountType: 'PC',
    bankName: BANKS[0],
    return: null,
    adjustment: null,
    legacyConflict: false,
  };
  return f;
}
