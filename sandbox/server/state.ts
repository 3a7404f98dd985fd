import type { IncomingMessage, ServerResponse } from 'node:http';
import { defaultAsOf, type History } from '../history.ts';
import type { Delivery } from '../notifications.ts';
import type { SandboxFaults } from './faults.ts';

/** What one running sandbox knows and counts; the endpoints receive it, and change only its mutable fields. */

export interface SandboxStats {
  tokensIssued: number;
  requests: Record<string, number>;
  faultsInjected: Record<string, number>;
}

/** Where and how notifications go (see SandboxOptions.notifyUrl); targets null: none are sent. */
export interface NotificationSettings {
  readonly targets: { transaction: string; return: string } | null;
  readonly attempts: number;
  readonly backoffMs: number;
  readonly secret: string | undefined;
}

export interface SandboxState {
  readonly history: History;
  readonly merchantId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly legacyMerchantId: string;
  readonly legacyMerchantPass: string;
  /** expires_in of issued tokens, seconds. */
  readonly tokenExpiresIn: number;
  faults: SandboxFaults;
  /** Statuses as known at this instant; undefined: the history's default. */
  asOf: string | undefined;
  /** Known once the server listens. */
  baseUrl: string;
  /** Access token to its expiry (epoch ms). */
  readonly tokens: Map<string, number>;
  readonly stats: SandboxStats;
  readonly deliveries: Delivery[];
  readonly confirmations: unknown[];
  readonly inFlight: Set<Promise<unknown>>;
  readonly notifications: NotificationSettings;
}

/** One endpoint: answers the request from (and into) the sandbox's state. */
export type Route = (state: SandboxState, req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * The sandbox's asOf in microseconds: the instant every endpoint answers as of. Unset, the history's
 * default (the end of its last day plus 30 days), as the reports read it (sandbox/history.ts), so that
 * the status answer and the notifications of returns see the provider as the reports do.
 */
export function asOfMicros(state: Pick<SandboxState, 'asOf' | 'history'>): number {
  return Date.parse(state.asOf ?? defaultAsOf(state.history.options)) * 1000;
}
