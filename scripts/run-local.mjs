// Starts the eventrelay processes of a local quick start (with the admin API) through the test
// harness (@eventrelay/testkit, built by `pnpm build`): Redis when none answers at REDIS_URL, the demo
// receiver and the five services, each waited for until ready. Prints how to use them, and stops
// them all on Ctrl-C or when one of them dies.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const testkit = path.join(root, 'packages/testkit/dist/index.js');
if (!existsSync(testkit)) {
  console.error('[eventrelay] packages/testkit is not built: run `pnpm build` first (scripts/up.sh does)');
  process.exit(1);
}
const { ensureRedis, probe, startChild, startService } = await import(testkit);

const config = process.env.EVENTRELAY_CONFIG ?? 'examples/eventrelay.config.json';
const ports = {
  ingest: Number(process.env.INGEST_PORT ?? 8080),
  router: Number(process.env.ROUTER_METRICS_PORT ?? 9101),
  'webhook-delivery': Number(process.env.DELIVERY_METRICS_PORT ?? 9102),
  audiences: Number(process.env.AUDIENCES_METRICS_PORT ?? 9103),
  admin: Number(process.env.ADMIN_PORT ?? 8081),
};
const receiverPort = process.env.DEMO_RECEIVER_PORT ?? '9999';
const adminToken = process.env.ADMIN_TOKEN ?? localAdminToken();

// The admin API refuses to start without a token; the quick start makes one on first run and keeps
// it in .eventrelay/admin-token (readable only by you), so the README's curl lines work as printed.
function localAdminToken() {
  const file = '.eventrelay/admin-token';
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const token = randomBytes(24).toString('hex');
  mkdirSync('.eventrelay', { recursive: true });
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  console.log(`[eventrelay] generated an admin token and saved it in ${file}: ${token}`);
  return token;
}

const started = [];
let stopping = false;
async function stop(code) {
  if (stopping) return;
  stopping = true;
  // One SIGTERM each (a second signal would make a service skip its graceful shutdown), all at once, Redis last.
  await Promise.all(started.filter((p) => p.name !== 'redis').map((p) => p.stop('SIGTERM', 10_000)));
  await Promise.all(started.filter((p) => p.name === 'redis').map((p) => p.stop()));
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
/** Tracks a started process: its death stops the rest. */
function track(name, handle, stopIt = (signal, graceMs) => handle.stop(signal, graceMs)) {
  started.push({ name, stop: stopIt });
  handle.exited?.then((exit) => {
    if (stopping) return;
    console.error(`[eventrelay] ${name} exited (${exit.signal ?? exit.code}); stopping the rest`);
    void stop(1);
  });
}

let redisUrl;
try {
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  mkdirSync('.eventrelay/redis', { recursive: true });
  const redis = await ensureRedis({
    url,
    onUrlPort: true,
    aof: 'everysec',
    dir: path.resolve('.eventrelay/redis'),
    logFile: path.resolve('.eventrelay/redis/redis.log'),
  });
  redisUrl = redis.url;
  if (redis.started) {
    console.log(
      `[eventrelay] no Redis answered at ${url}: started redis-server on ${redis.url} (data in .eventrelay/redis, AOF on; stops with this script)`,
    );
    const handle = redis.started.process();
    track('redis', handle, () => redis.close());
  }
} catch (err) {
  console.error(`[eventrelay] ${err.message}`);
  process.exit(1);
}

const env = {
  ...process.env,
  REDIS_URL: redisUrl,
  EVENTRELAY_CONFIG: config,
  ADMIN_TOKEN: adminToken,
  // Listen where the services do by default (all interfaces), as before the harness started them.
  INGEST_HOST: process.env.INGEST_HOST ?? '0.0.0.0',
  ADMIN_HOST: process.env.ADMIN_HOST ?? '0.0.0.0',
  // The demo receiver listens on loopback, which the SSRF guard refuses unless it is allowed.
  WEBHOOK_ALLOWED_NETWORKS: process.env.WEBHOOK_ALLOWED_NETWORKS ?? '127.0.0.1/32',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
};

try {
  // Own process groups (detached): Ctrl-C reaches only this script, which then stops each child once.
  const receiver = startChild({
    name: 'demo-receiver',
    args: ['examples/demo-receiver.mjs'],
    env: { ...env, DEMO_RECEIVER_PORT: receiverPort },
    cwd: root,
    detached: true,
    echo: 'raw',
    ready: async () => (await probe(`http://127.0.0.1:${receiverPort}/`)) === 200,
  });
  const services = Object.entries(ports).map(([name, port]) => startService(name, env, { port, cwd: root, detached: true, echo: 'raw' }));
  const results = await Promise.allSettled([receiver, ...services]);
  for (const [i, r] of results.entries())
    if (r.status === 'fulfilled') track(i === 0 ? 'demo-receiver' : Object.keys(ports)[i - 1], r.value);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
} catch (err) {
  console.error(`[eventrelay] ${err.message}`);
  await stop(1);
}

if (!stopping) {
  const source = JSON.parse(readFileSync(config, 'utf8')).sources?.[0];
  const body = JSON.stringify({ userId: 'demo-user', event: 'Demo Event', properties: { plan: 'pro' } });
  console.log(`
eventrelay is running (Ctrl-C stops it)
  intake            http://localhost:${ports.ingest}/v1/{identify,track,page,screen,group,alias,batch}
  console           http://localhost:${ports.admin}/console/   (sign in with the admin token below)
  admin API         http://localhost:${ports.admin}/admin/v1   Authorization: Bearer ${adminToken}
                    (token in .eventrelay/admin-token unless ADMIN_TOKEN is set; OpenAPI at /admin/v1/openapi.json)
  ops               ingest :${ports.ingest}  router :${ports.router}  webhook-delivery :${ports['webhook-delivery']}  audiences :${ports.audiences}  admin :${ports.admin}   (/healthz /readyz /metrics)
  demo receiver     http://127.0.0.1:${receiverPort}/webhook  (prints each delivery and checks its signature)
  config            ${config}

Send a call with the demo source's write key; the demo receiver prints the signed delivery a moment later:
  curl -u ${source?.writeKey ?? '<write key>'}: -H 'Content-Type: application/json' -d '${body}' http://localhost:${ports.ingest}/v1/track
`);
}
