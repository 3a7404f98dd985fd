import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpFailure, jsonBody, readBody, sendJson } from '../server/http.ts';
import type { SandboxState } from '../server/state.ts';

/** The OAuth2 client-credentials token endpoint, and the bearer check every data endpoint makes. */

export async function issueToken(
  state: SandboxState,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const form = new URLSearchParams(await readBody(req));
  if (!String(req.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded')) {
    throw new HttpFailure(400, {
      error: 'invalid_request',
      error_description: 'form-encoded body expected',
    });
  }
  if (form.get('grant_type') !== 'client_credentials') {
    throw new HttpFailure(400, {
      error: 'unsupported_grant_type',
      error_description: 'use client_credentials',
    });
  }
  if (form.get('client_id') !== state.clientId || form.get('client_secret') !== state.clientSecret) {
    throw new HttpFailure(401, {
      error: 'invalid_client',
      error_description: 'client authentication failed',
    });
  }
  const accessToken = `sbx.${randomBytes(24).toString('base64url')}`;
  const ttlMs = state.faults.tokenTtlMs ?? state.tokenExpiresIn * 1000;
  state.tokens.set(accessToken, Date.now() + ttlMs);
  state.stats.tokensIssued++;
  sendJson(res, 200, {
    access_token: accessToken,
    expires_in: String(state.tokenExpiresIn),
    token_type: 'Bearer',
  });
}

/** Throws 401 unless the request carries a token issued here and not yet expired. */
export function authorize(state: SandboxState, req: IncomingMessage): void {
  const header = String(req.headers.authorization ?? '');
  const m = /^Bearer (\S+)$/.exec(header);
  const expiresAt = m ? state.tokens.get(m[1]!) : undefined;
  if (expiresAt === undefined || expiresAt <= Date.now()) {
    throw new HttpFailure(401, {
      errorCode: 'A401',
      errorMessage: expiresAt === undefined ? 'not authorized' : 'access token expired',
    });
  }
}

/** The JSON body of an authorised request (401 first when the token is missing or expired). */
export async function authorisedJson(
  state: SandboxState,
  req: IncomingMessage,
): Promise<Record<string, unknown>> {
  authorize(state, req);
  return jsonBody(req);
}
