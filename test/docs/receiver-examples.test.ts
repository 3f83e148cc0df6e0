/**
 * The example receivers of docs/receivers.md (examples/receivers/: Node, Go, Python) run for real,
 * each as its own process on 127.0.0.1, against requests signed by webhook-delivery's own body and
 * header code: each must accept a good signature (X-Signature, either secret during a rotation,
 * Standard Webhooks with a `whsec_` and a raw secret) and refuse a bad one (another secret, a
 * changed body, a stale timestamp, no signature). A missing go or python3 fails, naming the package
 * to install: the examples are documentation, and documentation that was not run is not checked.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildBody, buildHeaders, type NormalizedCall, type PreviousSecret } from '@eventrelay/config';

const ROOT = path.resolve(__dirname, '../..');
const EXAMPLES = path.join(ROOT, 'examples', 'receivers');
const call = (
  JSON.parse(readFileSync(path.join(ROOT, 'packages/config/fixtures/webhooks/track.call.json'), 'utf8')) as { call: NormalizedCall }
).call;
const BODY = buildBody(call);

const OLD = 'x-signature-old-secret-01';
const NEW = 'x-signature-new-secret-02';
const WHSEC_OLD = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwn3pZ2yb5Kv0=';
const WHSEC_NEW = 'whsec_c2Vjb25kLXNlY3JldC1mb3ItdGhlLXJvdGF0aW9uISE=';
const RAW = 'a-raw-standard-secret-03';

interface SignedRequest {
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** A request as webhook-delivery sends it, signed with `secret` (and `previous`, while it overlaps). */
function signed(
  secret: string | undefined,
  options: { previous?: string; standard?: boolean; now?: number; body?: string } = {},
): SignedRequest {
  const now = options.now ?? Date.now();
  const previousSecret: PreviousSecret | undefined =
    options.previous === undefined ? undefined : { secret: options.previous, expiresAt: new Date(now + 3_600_000).toISOString() };
  const headers = buildHeaders({
    body: BODY,
    messageId: call.messageId,
    attempt: 1,
    sharedSecret: secret,
    signing: { destinationId: 'dst-docs', sourceId: 'src-docs', now, previousSecret, standardWebhooks: options.standard === true },
  });
  return { headers, body: options.body ?? BODY };
}

const TAMPERED = BODY.replace('Order Completed', 'Order Refunded');

/** One receiver process, configured as a reader would configure it, and what it must answer. */
interface ReceiverCase {
  readonly name: string;
  readonly scheme: 'x-signature' | 'standard-webhooks';
  readonly secret: string;
  readonly requests: readonly { readonly name: string; readonly request: SignedRequest; readonly status: 204 | 401 }[];
}

const RECEIVERS: readonly ReceiverCase[] = [
  {
    name: 'X-Signature, holding the old secret',
    scheme: 'x-signature',
    secret: OLD,
    requests: [
      { name: 'signed with its secret', request: signed(OLD), status: 204 },
      { name: 'during a rotation to a new secret (X-Signature stays on the old)', request: signed(NEW, { previous: OLD }), status: 204 },
      { name: 'signed with another secret', request: signed(NEW), status: 401 },
      { name: 'a body changed after signing', request: signed(OLD, { body: TAMPERED }), status: 401 },
      { name: 'no signature', request: signed(undefined), status: 401 },
    ],
  },
  {
    name: 'X-Signature, switched to the new secret',
    scheme: 'x-signature',
    secret: NEW,
    requests: [
      { name: 'during the rotation (X-Eventrelay-Signature-Next)', request: signed(NEW, { previous: OLD }), status: 204 },
      { name: 'after it (X-Signature)', request: signed(NEW), status: 204 },
      { name: 'signed with the old secret only', request: signed(OLD), status: 401 },
    ],
  },
  {
    name: 'Standard Webhooks, holding the old whsec_ secret',
    scheme: 'standard-webhooks',
    secret: WHSEC_OLD,
    requests: [
      { name: 'signed with its secret', request: signed(WHSEC_OLD, { standard: true }), status: 204 },
      { name: 'during a rotation (both signatures)', request: signed(WHSEC_NEW, { previous: WHSEC_OLD, standard: true }), status: 204 },
      { name: 'signed with another secret', request: signed(WHSEC_NEW, { standard: true }), status: 401 },
      { name: 'a body changed after signing', request: signed(WHSEC_OLD, { standard: true, body: TAMPERED }), status: 401 },
      { name: 'a timestamp 10 minutes old', request: signed(WHSEC_OLD, { standard: true, now: Date.now() - 600_000 }), status: 401 },
      { name: 'X-Signature alone', request: signed(WHSEC_OLD), status: 401 },
    ],
  },
  {
    name: 'Standard Webhooks, switched to the new whsec_ secret',
    scheme: 'standard-webhooks',
    secret: WHSEC_NEW,
    requests: [
      { name: 'during the rotation', request: signed(WHSEC_NEW, { previous: WHSEC_OLD, standard: true }), status: 204 },
      { name: 'signed with the old secret only', request: signed(WHSEC_OLD, { standard: true }), status: 401 },
    ],
  },
  {
    name: 'Standard Webhooks, a raw secret',
    scheme: 'standard-webhooks',
    secret: RAW,
    requests: [
      { name: 'signed with its secret', request: signed(RAW, { standard: true }), status: 204 },
      { name: 'signed with another secret', request: signed(OLD, { standard: true }), status: 401 },
    ],
  },
];

/** Fails, saying what to install, when `tool` cannot run (`versionArgs` ask it for its version). */
function requireTool(tool: string, versionArgs: string[], install: string): void {
  const run = spawnSync(tool, versionArgs, { encoding: 'utf8' });
  if (run.error || run.status !== 0)
    throw new Error(`${tool} is needed to run the example receivers of docs/receivers.md and is not installed: ${install}`);
}

interface Language {
  readonly name: string;
  /** Checks the tool and builds what needs building; returns the command that starts a receiver. */
  prepare(workDir: string): [string, string[]];
}

const LANGUAGES: readonly Language[] = [
  { name: 'Node (verify.mjs)', prepare: () => [process.execPath, [path.join(EXAMPLES, 'verify.mjs')]] },
  {
    name: 'Go (verify.go)',
    prepare(workDir) {
      requireTool('go', ['version'], 'apt-get install -y golang-go');
      const binary = path.join(workDir, 'verify-go');
      const env = { ...process.env, ...(process.env['GOCACHE'] || process.env['HOME'] ? {} : { GOCACHE: path.join(workDir, 'gocache') }) };
      const build = spawnSync('go', ['build', '-o', binary, path.join(EXAMPLES, 'verify.go')], { encoding: 'utf8', env, cwd: EXAMPLES });
      if (build.status !== 0) throw new Error(`go build examples/receivers/verify.go failed:\n${build.stderr}`);
      return [binary, []];
    },
  },
  {
    name: 'Python (verify.py)',
    prepare() {
      requireTool('python3', ['--version'], 'apt-get install -y python3');
      return ['python3', [path.join(EXAMPLES, 'verify.py')]];
    },
  },
];

/** Starts a receiver on a free port and resolves with its URL once it says it listens. */
function startReceiver(command: [string, string[]], env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(command[0], command[1], {
    env: { ...process.env, ...env, HOST: '127.0.0.1', PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`${command.join(' ')} did not say it listens within 20 s:\n${stdout}${stderr}`));
    }, 20_000);
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const listening = /listening on (http:\/\/\S+)/.exec(stdout);
      if (listening) {
        clearTimeout(timer);
        resolve({ url: listening[1]!, child });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command[0]} exited (${code}) before listening:\n${stderr}`));
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

function post(url: string, request: SignedRequest): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', headers: { ...request.headers, 'content-length': Buffer.byteLength(request.body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(request.body);
  });
}

describe.each(LANGUAGES)('the example receiver in $name', (language) => {
  let workDir: string;
  let command: [string, string[]];
  // Compiling the Go example can take a minute on a cold build cache.
  beforeAll(() => {
    workDir = mkdtempSync(path.join(tmpdir(), 'receiver-examples-'));
    command = language.prepare(workDir);
  }, 180_000);
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  it.each(RECEIVERS)('$name: accepts the good signatures and refuses the bad', async ({ scheme, secret, requests }) => {
    const { url, child } = await startReceiver(command, { WEBHOOK_SECRET: secret, WEBHOOK_SCHEME: scheme });
    try {
      const answers: { name: string; status: number }[] = [];
      for (const { name, request } of requests) answers.push({ name, status: await post(url, request) });
      expect(answers).toEqual(requests.map(({ name, status }) => ({ name, status })));
    } finally {
      await stop(child);
    }
  });

  it('refuses to start without a secret, saying which variable to set', async () => {
    await expect(startReceiver(command, { WEBHOOK_SECRET: '' })).rejects.toThrow(/WEBHOOK_SECRET/);
  });
});
