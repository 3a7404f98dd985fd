/**
 * Tells "the database is away" (nothing was done, try again later) from every other failure. Used by
 * the long-running processes to answer 503 and carry on instead of treating the error as a fault of
 * the request.
 */
const UNAVAILABLE_CODES = new Set([
  // Node socket errors while connecting or talking to the server.
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  // PostgreSQL: admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections,
  // database_dropped... and the whole class 08 (connection exception).
  '57P01',
  '57P02',
  '57P03',
  '57P05',
  '53300',
]);

const UNAVAILABLE_MESSAGES = [
  /connection terminated/i,
  /connection timeout/i,
  /timeout exceeded when trying to connect/i,
  /client has encountered a connection error/i,
  /cannot use a pool after calling end/i,
  /client was closed and is not queryable/i,
];

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const { code, message, errors } = e as { code?: unknown; message?: unknown; errors?: unknown };
    if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(message))) return true;
    // AggregateError (a connect to every address of a host failed).
    if (Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
