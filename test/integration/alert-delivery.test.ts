import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { loadConfig } from '../../config/config.ts';
import { ConfigError } from '../../domain/errors.ts';
import { AlertDeliveryFailed, deliverAlert } from '../../reconcile/alerts/deliver.ts';
import { alertBody, formatMoney, workbenchLink } from '../../reconcile/alerts/payload.ts';
import { parseWebhooks } from '../../reconcile/alerts/webhooks.ts';
import type { AlertInput } from '../../workflows/types.ts';
import { createTestDatabase } from '../support/database.ts';

/**
 * Webhook parsing, payloads, and how HTTP answers map to retryable or not (receiver on 127.0.0.1,
 * real database).
 */
const summary: AlertInput = {
  type: 'summary',
  from: '2026-02-01',
  to: '2026-02-01',
  workflowId: 'window-2026-02-01-2026-02-01',
  workflowRunId: 'r1',
  startedBy: null,
  reconcileRunId: 7,
  opened: 0,
  reopened: 0,
  resolved: 0,
  discrepancies: [],
};

let receiver: Server;
let base: string;
let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase(2);
  receiver = createServer((req, res) => {
    req.resume();
    const status = Number(req.url?.split('/')[1] ?? 200);
    res.writeHead(status, status === 429 ? { 'retry-after': '3' } : {}).end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await h?.close();
  await new Promise((resolve) => receiver.close(resolve));
});

describe('RECON_ALERT_WEBHOOKS', () => {
  it('reads slack:, json: and bare URLs, hashing format and URL', () => {
    const hooks = parseWebhooks(
      ' slack:https://hooks.slack.com/services/T/B/X , https://a.test/h,JSON:http://b.test/',
    );
    expect(hooks.map((w) => [w.position, w.format, w.url])).toEqual([
      [1, 'slack', 'https://hooks.slack.com/services/T/B/X'],
      [2, 'json', 'https://a.test/h'],
      [3, 'json', 'http://b.test/'],
    ]);
    expect(hooks.every((w) => /^[0-9a-f]{64}$/.test(w.sha256))).toBe(true);
    expect(parseWebhooks(undefined)).toEqual([]);
    expect(parseWebhooks('slack:https://x.test/1')[0]!.sha256).not.toBe(
      parseWebhooks('https://x.test/1')[0]!.sha256,
    );
  });

  it('refuses a malformed entry without quoting it', () => {
    expect(() => parseWebhooks('https://ok.test,not a url SECRET42')).toThrow(ConfigError);
    expect(() => parseWebhooks('https://ok.test,not a url SECRET42')).toThrow(/entry #2 is not a URL/);
    expect(() => parseWebhooks('ftp://x.test/SECRET42')).not.toThrow(/SECRET42/);
    expect(() => parseWebhooks('ftp://x.test/SECRET42')).toThrow(/entry #1 is not an http\(s\) URL/);
  });
});

describe('RECON_WORKBENCH_URL', () => {
  it('is an http(s) URL or unset', () => {
    expect(loadConfig({ RECON_WORKBENCH_URL: 'https://recon.example.com' }).workbenchUrl).toBe(
      'https://recon.example.com',
    );
    expect(loadConfig({}).workbenchUrl).toBeUndefined();
    expect(() => loadConfig({ RECON_WORKBENCH_URL: 'recon.example.com' })).toThrow(
      /RECON_WORKBENCH_URL is not an http\(s\) address without user or password/,
    );
  });
});

describe('payloads', () => {
  it('writes money with its currency and links to the workbench', () => {
    expect(formatMoney(1234567, 'CAD')).toBe('12,345.67 CAD');
    expect(formatMoney(-5, 'USD')).toBe('-0.05 USD');
    expect(formatMoney(100, null)).toBe('1.00 (no currency)');
    expect(workbenchLink('https://w.test/recon/', summary)).toBe(
      'https://w.test/recon/?status=open&from=2026-02-01&to=2026-02-01',
    );
    expect(workbenchLink(undefined, summary)).toBeNull();
    const slack = alertBody('slack', summary, undefined) as { text: string; blocks: unknown[] };
    expect(slack.text).toContain('0 new');
    expect(JSON.stringify(slack.blocks)).toContain('No open discrepancies in the window');
  });
});

describe('delivery answers', () => {
  async function failure(status: number): Promise<AlertDeliveryFailed> {
    const webhooks = parseWebhooks(`${base}/${status}/SECRET42`);
    const error = await deliverAlert(h.db, summary, { webhooks }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AlertDeliveryFailed);
    expect((error as Error).message).not.toContain('SECRET42');
    expect((error as Error).message).not.toContain('127.0.0.1');
    return error as AlertDeliveryFailed;
  }

  it('retries 5xx, 408 and 429 (with Retry-After), not another 4xx', async () => {
    expect((await failure(500)).retryable).toBe(true);
    expect((await failure(503)).retryable).toBe(true);
    expect((await failure(408)).retryable).toBe(true);
    const limited = await failure(429);
    expect(limited.retryable).toBe(true);
    expect(limited.retryAfterMs).toBe(3000);
    expect((await failure(400)).retryable).toBe(false);
    expect((await failure(404)).retryable).toBe(false);
    expect((await failure(410)).message).toMatch(/refused the alert with HTTP 410: check that entry/);
    // Nothing was recorded as delivered.
    expect(await h.db.selectFrom('alert_deliveries').selectAll().execute()).toEqual([]);
  });

  it('names an unreachable webhook by position and hash only', async () => {
    const webhooks = parseWebhooks('http://127.0.0.1:1/SECRET42');
    const error = (await deliverAlert(h.db, summary, { webhooks }).catch(
      (e: unknown) => e,
    )) as AlertDeliveryFailed;
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/webhook #1 \(sha256 [0-9a-f]{12}\) could not be reached/);
    expect(error.message).not.toContain('SECRET42');
  });
});
