/**
 * The default time limits of analyst logins (db/analyst-logins.ts), apart from the statements that set
 * them: the embedded warehouse gives its analyst login these when it starts (db/embedded-warehouse/),
 * which every command that opens it loads, Kysely-free (db/pool.ts).
 */
export const ANALYST_LIMIT_DEFAULTS = {
  /** statement_timeout: the longest single query, in seconds. */
  statementTimeoutSeconds: 900,
  /** idle_in_transaction_session_timeout: a transaction left open without a query, in seconds. */
  idleInTransactionSeconds: 300,
} as const;

export interface AnalystLimits {
  readonly statementTimeoutSeconds: number;
  readonly idleInTransactionSeconds: number;
}
