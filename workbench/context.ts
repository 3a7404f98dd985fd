/**
 * What every route of the workbench is handed (the primary, the replica reads, session settings,
 * metrics, the schedule reader) and the session cookie's name and form. Its own module, so that the
 * server and its route files import it instead of each other.
 */
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import type { WorkbenchMetrics } from '../observability/workbench-metrics.ts';
import type { PasswordChecks } from './auth/password-checks.ts';
import type { Principal, SessionSettings } from './auth/sessions.ts';
import type { Role } from './auth/accounts.ts';
import type { PreviewJobs } from './preview-jobs.ts';
import type { ScheduleReader } from './queries/schedule.ts';
import type { ReplicaReads } from './replica-reads.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Least role the route needs; 'public' for none. Routes without it are refused. */
    role?: Role | 'public';
    /** An HTML page: unauthenticated visitors are sent to the sign-in page instead of a 401. */
    page?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export const SESSION_COOKIE = 'recon_session';

export interface WorkbenchContext {
  /** The primary: authentication, sessions, actions, the discrepancy detail. */
  readonly db: Kysely<Database>;
  /** The worklist, CSV, runs, loads and coverage: the replica when configured, else the primary. */
  readonly reads: ReplicaReads;
  readonly sessions: SessionSettings;
  /** The bound on password checks running at once (sign-in). */
  readonly passwordChecks: PasswordChecks;
  readonly metrics: WorkbenchMetrics;
  readonly schedule: ScheduleReader;
  /** The previews of tolerance proposals running or done in this process (preview-jobs.ts). */
  readonly previews: PreviewJobs;
}

/**
 * The cookies of a request. A value that is not valid percent-encoding is kept as sent: it then
 * matches no session, and the request is answered as one without that cookie.
 */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const raw = part.slice(i + 1).trim();
    try {
      out[part.slice(0, i).trim()] = decodeURIComponent(raw);
    } catch {
      out[part.slice(0, i).trim()] = raw;
    }
  }
  return out;
}

/** Set-Cookie for the session: HttpOnly, SameSite=Strict, Secure when the request came over HTTPS. */
export function sessionCookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
}
