import type { IncomingMessage, ServerResponse } from 'node:http';
import { issueToken } from '../routes/auth.ts';
import { DATA_ROUTES } from '../routes/index.ts';
import { count, takeFault } from './faults.ts';
import { HttpFailure, readBody, sendJson } from './http.ts';
import type { SandboxState } from './state.ts';

/**
 * Answers one request: logs it, counts it, injects the request faults (slowness, 429, 500) on data
 * endpoints, then hands it to its route. Failures become their status and body; an unexpected error
 * is a 500, or a cut connection once the body has started.
 */
export function dispatch(
  state: SandboxState,
  log: (line: string) => void,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  handle(state, log, req, res).catch((error: unknown) => {
    if (error instanceof HttpFailure) {
      sendJson(res, error.status, error.body);
    } else if (!res.headersSent) {
      sendJson(res, 500, { errorCode: 'S500', errorMessage: 'internal system error' });
    } else {
      res.destroy();
    }
  });
}

async function handle(
  state: SandboxState,
  log: (line: string) => void,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://sandbox').pathname;
  res.on('finish', () => log(`${req.method} ${path} ${res.statusCode}`));
  if (req.method !== 'POST') throw new HttpFailure(405, { errorCode: 'M405', errorMessage: 'use POST' });
  count(state.stats.requests, path);
  if (path === '/auth/oauth2/token') return issueToken(state, req, res);
  const route = DATA_ROUTES[path];
  if (!route) throw new HttpFailure(404, { errorCode: 'N404', errorMessage: `no endpoint ${path}` });
  const { faults } = state;
  if (faults.slowMs) await new Promise((r) => setTimeout(r, faults.slowMs));
  if (takeFault(state, 'rateLimits', faults.rateLimitRate)) {
    count(state.stats.faultsInjected, '429');
    await readBody(req);
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': faults.retryAfter ?? '1' });
    res.end(JSON.stringify({ errorCode: 'R429', errorMessage: 'too many requests' }));
    return;
  }
  if (takeFault(state, 'serverErrors', state.faults.errorRate)) {
    count(state.stats.faultsInjected, '500');
    await readBody(req);
    throw new HttpFailure(500, { errorCode: 'S500', errorMessage: 'internal system error' });
  }
  return route(state, req, res);
}
