/**
 * The checks every compiled service must pass as operators run it (jest-specific; the processes
 * come from @eventrelay/testkit): bad start-up input stops it with a message naming what is wrong,
 * and once ready it serves the ops endpoints and exits 0 on SIGTERM.
 */
import {
  SHARED_REDIS_URL,
  buildServices,
  deletePrefix,
  freePort,
  runServiceToExit,
  spawnChild,
  SERVICE_NODE_FLAGS,
  distEntry,
  uniquePrefix,
  waitForOk,
  type ServiceName,
} from '@eventrelay/testkit';

export function describeWorkerProcess(
  name: ServiceName,
  opsPortVariable: string,
  badEnv: Record<string, string>,
  namedInError: string[],
): void {
  describe(`the ${name} process`, () => {
    const prefix = uniquePrefix('proc');
    beforeAll(() => buildServices(name), 120_000);
    afterAll(() => deletePrefix(SHARED_REDIS_URL, prefix));

    it('refuses to start on bad environment values and names every bad variable', async () => {
      const result = await runServiceToExit(name, badEnv);
      expect(result.code).toBe(1);
      for (const text of namedInError) expect(result.output).toContain(text);
    });

    it('refuses to start on a config file that does not exist, naming it', async () => {
      const result = await runServiceToExit(name, {
        REDIS_URL: SHARED_REDIS_URL,
        EVENTRELAY_PREFIX: prefix,
        EVENTRELAY_CONFIG: '/nonexistent/eventrelay.json',
        [opsPortVariable]: '0',
      });
      expect(result.code).toBe(1);
      expect(result.output).toContain('EVENTRELAY_CONFIG');
      expect(result.output).toContain('/nonexistent/eventrelay.json');
    });

    it('serves /healthz, /readyz and /metrics, and exits 0 on SIGTERM', async () => {
      await expectServesThenStops(name, { REDIS_URL: SHARED_REDIS_URL, EVENTRELAY_PREFIX: prefix, LOG_LEVEL: 'info' }, opsPortVariable, {
        metric: 'eventrelay_',
        otherPath: { path: '/other', status: 404 },
      });
    }, 30_000);
  });
}

/**
 * Runs the service on a free port (in `portVariable`) until /readyz answers, checks its ops
 * endpoints, then sends SIGTERM and expects a clean exit (0, `shutdown.done`).
 */
export async function expectServesThenStops(
  name: ServiceName,
  env: Record<string, string>,
  portVariable: string,
  checks: { metric: string; otherPath: { path: string; status: number } },
): Promise<void> {
  const port = await freePort();
  // Spawned without waiting: waitForOk below is part of what is checked.
  const child = spawnChild({ name, args: [...SERVICE_NODE_FLAGS, distEntry(name)], env: { ...env, [portVariable]: String(port) } });
  try {
    await waitForOk(`http://127.0.0.1:${port}/readyz`);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain(checks.metric);
    expect((await fetch(`http://127.0.0.1:${port}${checks.otherPath.path}`)).status).toBe(checks.otherPath.status);
    expect(await child.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(child.output()).toContain('shutdown.done');
  } finally {
    if (child.running()) await child.stop('SIGKILL');
  }
}
