// Starts the eventrelay processes of a local quick start (with the admin API), waits until each is
// ready, prints how to use them, and stops them all on Ctrl-C or when one of them dies.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const config = process.env.EVENTRELAY_CONFIG ?? 'examples/eventrelay.config.json';
const ingestPort = process.env.INGEST_PORT ?? '8080';
const routerPort = process.env.ROUTER_METRICS_PORT ?? '9101';
const deliveryPort = process.env.DELIVERY_METRICS_PORT ?? '9102';
const audiencesPort = process.env.AUDIENCES_METRICS_PORT ?? '9103';
const receiverPort = process.env.DEMO_RECEIVER_PORT ?? '9999';
const adminPort = process.env.ADMIN_PORT ?? '8081';
const adminToken = process.env.ADMIN_TOKEN ?? localAdminToken();
const env = {
  ...process.env,
  EVENTRELAY_CONFIG: config,
  INGEST_PORT: ingestPort,
  ROUTER_METRICS_PORT: routerPort,
  DELIVERY_METRICS_PORT: deliveryPort,
  AUDIENCES_METRICS_PORT: audiencesPort,
  DEMO_RECEIVER_PORT: receiverPort,
  ADMIN_PORT: adminPort,
  ADMIN_TOKEN: adminToken,
  // The demo receiver listens on loopback, which the SSRF guard refuses unless it is allowed.
  WEBHOOK_ALLOWED_NETWORKS: process.env.WEBHOOK_ALLOWED_NETWORKS ?? '127.0.0.1/32',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
};

const processes = [
  { name: 'demo-receiver', entry: 'examples/demo-receiver.mjs', ready: `http://127.0.0.1:${receiverPort}/` },
  { name: 'ingest', entry: 'services/ingest/dist/index.js', ready: `http://127.0.0.1:${ingestPort}/readyz` },
  { name: 'router', entry: 'services/router/dist/index.js', ready: `http://127.0.0.1:${routerPort}/readyz` },
  { name: 'webhook-delivery', entry: 'services/webhook-delivery/dist/index.js', ready: `http://127.0.0.1:${deliveryPort}/readyz` },
  { name: 'audiences', entry: 'services/audiences/dist/index.js', ready: `http://127.0.0.1:${audiencesPort}/readyz` },
  { name: 'admin', entry: 'services/admin/dist/index.js', ready: `http://127.0.0.1:${adminPort}/readyz` },
];

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

/** As the Dockerfile's NODE_OPTIONS: a 32 MB young generation (see the comment there). */
const SERVICE_NODE_FLAGS = ['--max-semi-space-size=32'];

const children = processes.map(({ name, entry }) => {
  // Own process group: Ctrl-C reaches only this script, which then sends each child one SIGTERM
  // (a second signal would make a child skip its graceful shutdown).
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, entry], { env, stdio: ['ignore', 'inherit', 'inherit'], detached: true });
  child.on('exit', (code, signal) => {
    if (stopping) return;
    console.error(`[eventrelay] ${name} exited (${signal ?? code}); stopping the rest`);
    stop(1);
  });
  return child;
});

let stopping = false;
function stop(code) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  setTimeout(() => process.exit(code), 3000).unref();
  Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null))).then(() => process.exit(code));
}
process.on('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGTERM')));
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

async function waitReady(url) {
  for (let i = 0; i < 150; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not become ready in 30 s`);
}

try {
  await Promise.all(processes.map((p) => waitReady(p.ready)));
} catch (err) {
  console.error(`[eventrelay] ${err.message}`);
  stop(1);
}
if (!stopping) {
  const source = JSON.parse(readFileSync(config, 'utf8')).sources?.[0];
  const body = JSON.stringify({ userId: 'demo-user', event: 'Demo Event', properties: { plan: 'pro' } });
  console.log(`
eventrelay is running (Ctrl-C stops it)
  intake            http://localhost:${ingestPort}/v1/{identify,track,page,screen,group,alias,batch}
  admin API         http://localhost:${adminPort}/admin/v1   Authorization: Bearer ${adminToken}
                    (token in .eventrelay/admin-token unless ADMIN_TOKEN is set; OpenAPI at /admin/v1/openapi.json)
  ops               ingest :${ingestPort}  router :${routerPort}  webhook-delivery :${deliveryPort}  audiences :${audiencesPort}  admin :${adminPort}   (/healthz /readyz /metrics)
  demo receiver     http://127.0.0.1:${receiverPort}/webhook  (prints each delivery and checks its signature)
  config            ${config}

Send a call with the demo source's write key; the demo receiver prints the signed delivery a moment later:
  curl -u ${source?.writeKey ?? '<write key>'}: -H 'Content-Type: application/json' -d '${body}' http://localhost:${ingestPort}/v1/track
`);
}
