/**
 * What a command says when its database is unreachable, goes away or stops answering: one line that
 * names the server (host:port/database, never the user or password) and what to do. Commands print
 * it through {@link databaseErrorLine} (cli/run.ts) and exit 1 (a run-time failure; re-running is the
 * remedy, since a load or a reconcile run keeps nothing partial).
 */

import { typedError } from '../domain/errors.ts';

export class DatabaseUnavailable extends typedError('retryable') {}

/** Connection strings of the databases this process opened, newest last (for the message). */
let lastAddress: string | undefined;
/** Set when the watchdog gave up waiting for a database that stopped answering. */
let gaveUp: { address: string; seconds: number } | undefined;
/** Whether any connection to the database succeeded: then a refused connection means it went away. */
let everConnected = false;

/** host:port/database of a connection string, without user or password. */
export function databaseAddress(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    const host = url.searchParams.get('host') ?? (url.hostname || 'localhost');
    const port = url.port || url.searchParams.get('port') || '5432';
    const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || '(default database)';
    return `${host}:${port}/${database}`;
  } catch {
    return 'the configured DATABASE_URL';
  }
}

export function noteDatabase(connectionString: string): void {
  lastAddress = databaseAddress(connectionString);
}

export function noteConnected(): void {
  everConnected = true;
}

export function noteGaveUp(connectionString: string, seconds: number): void {
  gaveUp = { address: databaseAddress(connectionString), seconds };
}

const LOST_MESSAGES = [
  /connection terminated/i,
  /server closed the connection/i,
  /terminating connection/i,
  /connection (?:is )?(?:closed|ended)/i,
  /client has encountered a connection error/i,
  /socket hang up/i,
  /timeout exceeded when trying to connect/i,
  /Client was closed and is not queryable/i,
];
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
const LOST_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED']);

type Kind = 'unreachable' | 'lost' | 'login' | 'missing-database';

function classify(error: unknown, depth = 0): Kind | undefined {
  if (!(error instanceof Error) || depth > 4) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNREACHABLE_CODES.has(code)) return 'unreachable';
    if (LOST_CODES.has(code)) return 'lost';
    // SQLSTATE class 08 (connection exception), 57P01-57P03 (shutdown, crash, not accepting yet).
    if (code.startsWith('08') || code === '57P01' || code === '57P02') return 'lost';
    if (code === '57P03') return 'unreachable';
    if (code === '28P01' || code === '28000') return 'login';
    if (code === '3D000') return 'missing-database';
  }
  if (error instanceof AggregateError) {
    for (const inner of error.errors) {
      const kind = classify(inner, depth + 1);
      if (kind) return kind;
    }
  }
  if (LOST_MESSAGES.some((re) => re.test(error.message))) return 'lost';
  return classify(error.cause, depth + 1);
}

/** Besides a connection lost or refused: the server is full, or the pool itself cannot connect. */
const AWAY_CODES = new Set(['53300', '57P05']);
const AWAY_MESSAGES = [/connection timeout/i, /cannot use a pool after calling end/i];

/**
 * Tells "the database is away" (nothing was done, try again later) from every other failure: the
 * long-running processes answer 503 and carry on instead of treating it as a fault of the request.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const kind = classify(error);
  if (kind === 'unreachable' || kind === 'lost') return true;
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && AWAY_CODES.has(code)) return true;
    if (typeof message === 'string' && AWAY_MESSAGES.some((re) => re.test(message))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** Whether an error means the database could not be reached or the connection was lost. */
export function isConnectionError(error: unknown): boolean {
  const kind = classify(error);
  return kind === 'unreachable' || kind === 'lost' || gaveUp !== undefined;
}

/**
 * The one line for an error about the database connection, or undefined for any other error.
 * `connectionString` names the server when given, else the last database this process opened.
 */
export function databaseErrorLine(error: unknown, connectionString?: string): string | undefined {
  if (error instanceof DatabaseUnavailable) return error.message;
  const address = connectionString ? databaseAddress(connectionString) : lastAddress;
  if (gaveUp) {
    return (
      `the database at ${gaveUp.address} did not answer for ${gaveUp.seconds} s (RECON_DB_TIMEOUT_SECONDS); ` +
      'nothing partial was kept: check that the server is running and not overloaded, then re-run the command'
    );
  }
  const kind = classify(error);
  if (kind === undefined) return undefined;
  const where = address ?? 'DATABASE_URL';
  switch (kind) {
    case 'unreachable':
      return everConnected
        ? `lost the connection to the database at ${where} (it refuses connections now); nothing partial was kept: ` +
            'check that PostgreSQL is running, then re-run the command'
        : `cannot reach the database at ${where} (${reason(error)}): check that PostgreSQL is running there ` +
            'and that DATABASE_URL names the right host and port';
    case 'lost':
      return (
        `lost the connection to the database at ${where} (${reason(error)}); nothing partial was kept: ` +
        'check that PostgreSQL is running, then re-run the command'
      );
    case 'login':
      return `the database at ${where} refused the login: check the user and password in DATABASE_URL`;
    case 'missing-database':
      return `the database at ${where} does not exist: create it or correct DATABASE_URL, then run recon migrate`;
  }
}

function reason(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'host unreachable';
  if (code === '57P01') return 'the server shut down';
  if (code === '57P02') return 'the server crashed';
  if (code === '57P03') return 'the server is starting up or shutting down';
  if (error instanceof AggregateError && error.errors[0]) return reason(error.errors[0]);
  if (error instanceof Error && /terminat|closed|ended|reset|hang up/i.test(error.message))
    return 'the server closed the connection';
  if (error instanceof Error && error.cause) return reason(error.cause);
  return 'no answer';
}
