/**
 * Operator notifications as signed webhooks (NOTIFY_WEBHOOK_URL): one JSON POST per event, with
 * the Standard Webhooks headers when NOTIFY_WEBHOOK_SECRET is set, so a team can route them to
 * Slack or PagerDuty. The URL is the operator's own, so the SSRF guard does not apply. Best effort:
 * each event is tried three times within about six seconds, then logged as lost; the audit log
 * holds every event whatever happens here.
 */
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { USER_AGENT, standardWebhooksKey, standardWebhooksSignature } from '@eventrelay/config';
import type { Logger } from '@eventrelay/runtime';

interface OperatorEvent {
  /** The audit action, e.g. `destination.breaker_opened`. */
  readonly type: string;
  readonly at: string;
  readonly destinationId: string;
  readonly details: Readonly<Record<string, unknown>>;
}

export interface OperatorNotifier {
  notify(event: OperatorEvent): void;
  /** Waits for the notifications under way (their retries included). */
  close(): Promise<void>;
}

export interface OperatorWebhookOptions {
  readonly url: string;
  readonly secret?: string | undefined;
  readonly clock: () => number;
  readonly logger: Logger;
  readonly timeoutMs?: number;
  /** Waits before the second and third tries. */
  readonly backoffMs?: readonly number[];
}

export const NO_NOTIFIER: OperatorNotifier = { notify: () => undefined, close: () => Promise.resolve() };

export function createOperatorWebhook(options: OperatorWebhookOptions): OperatorNotifier {
  const key = options.secret === undefined ? undefined : standardWebhooksKey(options.secret);
  const backoff = options.backoffMs ?? [1000, 5000];
  const pending = new Set<Promise<void>>();

  async function post(id: string, body: string): Promise<string | undefined> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': USER_AGENT };
    if (key) {
      const timestamp = Math.floor(options.clock() / 1000);
      headers['webhook-id'] = id;
      headers['webhook-timestamp'] = String(timestamp);
      headers['webhook-signature'] = standardWebhooksSignature(key, id, timestamp, body);
    }
    try {
      const res = await request(options.url, {
        method: 'POST',
        headers,
        body,
        headersTimeout: options.timeoutMs ?? 5000,
        bodyTimeout: options.timeoutMs ?? 5000,
      });
      await res.body.dump();
      return res.statusCode >= 200 && res.statusCode < 300 ? undefined : `HTTP ${res.statusCode}`;
    } catch (err) {
      return String((err as Error).message ?? err);
    }
  }

  async function send(event: OperatorEvent): Promise<void> {
    const id = `evt_${randomUUID()}`;
    const body = JSON.stringify({ id, ...event });
    let error: string | undefined;
    for (let attempt = 0; attempt <= backoff.length; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, backoff[attempt - 1]));
      error = await post(id, body);
      if (error === undefined) return;
    }
    options.logger.warn({ type: event.type, destinationId: event.destinationId, err: error }, 'notify.failed');
  }

  return {
    notify(event) {
      const done = send(event).finally(() => pending.delete(done));
      pending.add(done);
    },
    async close() {
      await Promise.all([...pending]);
    },
  };
}
