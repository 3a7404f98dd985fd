import { Agent, type Dispatcher } from 'undici';
import type { Config } from '../../config/config.ts';
import { ConfigError } from '../../domain/errors.ts';
import { checkTlsVerification } from '../../config/process-environment.ts';
import { checkProviderUrl, isLoopbackHost } from './http-policy.ts';
import type { ProviderClientOptions } from './types.ts';
import { ENVIRONMENT_SETTING_NAMES, type ProviderSettingNames } from './setting-names.ts';

/**
 * What every call of one provider client shares: the checked URLs, the HTTP dispatcher, the retry
 * settings, the token cache, and the secrets to cut from any text that could reach a message.
 */

export type UrlVariable = 'RECON_BASE_URL' | 'RECON_AUTH_URL' | 'RECON_QUERY_URL';

export interface Token {
  readonly value: string;
  readonly refreshAt: number;
}

export interface ProviderConnection {
  readonly config: Config;
  /** How messages name the settings: the RECON_* variables, or one account's fields. */
  readonly names: ProviderSettingNames;
  readonly dispatcher: Dispatcher;
  readonly ownsDispatcher: boolean;
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** Milliseconds before expires_in ends at which a token is refreshed. */
  readonly refreshMarginMs: number;
  readonly urls: Readonly<Record<UrlVariable, URL | undefined>>;
  /** The token cache: one token, one request in flight at most. */
  readonly tokens: { current: Token | null; inFlight: Promise<Token> | null; requests: number };
}

/** Checks the configuration (HTTPS, no loopback in production, TLS verification on) and opens the dispatcher. */
export function openConnection(config: Config, options: ProviderClientOptions): ProviderConnection {
  checkTlsVerification(options.env);
  const names = options.settingNames ?? ENVIRONMENT_SETTING_NAMES;
  const p = config.provider;
  const urls: Record<string, URL | undefined> = {};
  for (const [variable, value] of [
    ['RECON_BASE_URL', p.baseUrl],
    ['RECON_AUTH_URL', p.authUrl],
    ['RECON_QUERY_URL', p.queryUrl],
  ] as const) {
    urls[variable] = value === undefined ? undefined : checkProviderUrl(settingOf(names, variable), value);
  }
  if (config.environment === 'production') {
    const local = Object.entries(urls).filter(([, u]) => u && isLoopbackHost(u.hostname));
    if (local.length > 0) {
      throw new ConfigError(
        `${names.environment}=production but ${local.map(([k]) => settingOf(names, k as UrlVariable)).join(', ')} point(s) at a loopback address (the sandbox): use the production settings, or ${names.environment}=staging`,
      );
    }
  }
  const dispatcher =
    options.dispatcher ??
    new Agent({
      keepAliveTimeout: 10_000,
      keepAliveMaxTimeout: 60_000,
      connections: 8,
      connect: { timeout: options.connectTimeoutMs ?? 10_000 },
      headersTimeout: options.headersTimeoutMs ?? 60_000,
      bodyTimeout: options.bodyTimeoutMs ?? 60_000,
    });
  return {
    config,
    names,
    dispatcher,
    ownsDispatcher: options.dispatcher === undefined,
    maxAttempts: options.maxAttempts ?? 4,
    baseDelayMs: options.baseDelayMs ?? 250,
    maxDelayMs: options.maxDelayMs ?? 10_000,
    refreshMarginMs: (options.refreshMarginSeconds ?? 60) * 1000,
    urls: urls as Record<UrlVariable, URL | undefined>,
    tokens: { current: null, inFlight: null, requests: 0 },
  };
}

/** How messages name a URL setting: its variable, or the account's field. */
export function settingOf(names: ProviderSettingNames, variable: UrlVariable): string {
  return variable === 'RECON_BASE_URL'
    ? names.baseUrl
    : variable === 'RECON_AUTH_URL'
      ? names.authUrl
      : names.queryUrl;
}

/** The URL a call needs, or a ConfigError naming the variable to set. */
export function need(conn: ProviderConnection, variable: UrlVariable, purpose: string): URL {
  const url = conn.urls[variable];
  if (!url)
    throw new ConfigError(`${purpose} needs ${settingOf(conn.names, variable)}: set it ${conn.names.where}`);
  return url;
}

export const join = (base: URL, path: string) => new URL(`${base.pathname.replace(/\/$/, '')}${path}`, base);

/** The text with the client's secrets (client secret, legacy pass, current token) cut out. */
export function redactSecrets(conn: ProviderConnection, text: string): string {
  const p = conn.config.provider;
  const secrets = [p.clientSecret, p.legacyMerchantPass, conn.tokens.current?.value].filter(
    (s): s is string => !!s && s.length >= 4,
  );
  return secrets.reduce((t, s) => t.split(s).join('[redacted]'), text);
}
