/**
 * The admin API in the test process, started through its real start function against real Redis
 * under the given prefix (a pipeline's, to drive live config changes), with a client for it.
 */
import { pino } from 'pino';
import { createMetricsRegistry } from '@eventrelay/runtime';
import { loadEnv as loadAdminEnv } from '../../services/admin/src/env';
import { startAdmin, type RunningAdmin } from '../../services/admin/src/service';
import { SHARED_REDIS_URL } from '@eventrelay/testkit';

export const ADMIN_TEST_TOKEN = 'test-admin-token-0123456789';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read answers freely
export interface AdminAnswer<T = any> {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON, or undefined for an empty body. */
  readonly body: T;
  readonly text: string;
}

export interface TestAdmin {
  readonly url: string;
  readonly running: RunningAdmin;
  /** A request to `/admin/v1<path>` with the test token (pass `token: null` for none). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read answers freely
  call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    options?: { token?: string | null; rawBody?: string },
  ): Promise<AdminAnswer<T>>;
  close(): Promise<void>;
}

export async function startTestAdmin(options: { prefix: string; env?: Record<string, string>; clock?: () => number }): Promise<TestAdmin> {
  const env = loadAdminEnv({
    REDIS_URL: SHARED_REDIS_URL,
    EVENTRELAY_PREFIX: options.prefix,
    LOG_LEVEL: 'silent',
    ADMIN_PORT: '0',
    ADMIN_HOST: '127.0.0.1',
    ADMIN_TOKEN: ADMIN_TEST_TOKEN,
    ...options.env,
  });
  const running = await startAdmin(env, {
    logger: pino({ level: 'silent' }),
    registry: createMetricsRegistry('admin'),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const url = `http://127.0.0.1:${running.port}`;
  return {
    url,
    running,
    async call(method, path, body, callOptions = {}) {
      const token = callOptions.token === undefined ? ADMIN_TEST_TOKEN : callOptions.token;
      const headers: Record<string, string> = {};
      if (token !== null) headers['authorization'] = `Bearer ${token}`;
      const payload = callOptions.rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
      if (payload !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${url}/admin/v1${path}`, { method, headers, ...(payload === undefined ? {} : { body: payload }) });
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, body: text === '' ? undefined : JSON.parse(text) };
    },
    close: () => running.close(),
  };
}
