/**
 * The deployment artifacts held against the code they deploy, without a Docker engine or a
 * cluster: docker-compose.yml (with compose's variable interpolation), ops/prometheus/prometheus.yml,
 * every k8s/ manifest as the base and the prod overlay render it (test/support/kustomize.ts), the
 * Dockerfile and the Grafana dashboard. Every variable they set must be one the process reads and
 * must load through its loadEnv; every command must name an entry point that exists; ports,
 * probes, scrape targets and mounts must line up.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ingestEnvSpec, loadEnv as loadIngestEnv } from '../../services/ingest/src/env';
import { routerEnvSpec, loadEnv as loadRouterEnv } from '../../services/router/src/env';
import { deliveryEnvSpec, loadEnv as loadDeliveryEnv } from '../../services/webhook-delivery/src/env';
import { audiencesEnvSpec, loadEnv as loadAudiencesEnv } from '../../services/audiences/src/env';
import { adminEnvSpec, loadEnv as loadAdminEnv } from '../../services/admin/src/env';
import { renderKustomization, type Manifest } from '../support/kustomize';
import { REPO_ROOT as ROOT, dashboardPanels, loadDashboard, opsQueries, promqlSelectors } from './promql-names';

// ------------------------------------------------------------------------------- the processes

type EnvRecord = Readonly<Record<string, unknown>>;

interface ProcessInfo {
  readonly spec: Readonly<Record<string, unknown>>;
  readonly load: (source: Record<string, string>) => EnvRecord;
}

const PROCESSES: Record<string, ProcessInfo> = {
  ingest: { spec: ingestEnvSpec, load: loadIngestEnv },
  router: { spec: routerEnvSpec, load: loadRouterEnv },
  'webhook-delivery': { spec: deliveryEnvSpec, load: loadDeliveryEnv },
  audiences: { spec: audiencesEnvSpec, load: loadAudiencesEnv },
  admin: { spec: adminEnvSpec, load: loadAdminEnv },
};
const NAMES = Object.keys(PROCESSES);
const info = (name: string): ProcessInfo => PROCESSES[name] as ProcessInfo;

/** The variable holding the port a process serves /healthz, /readyz and /metrics on: its one *_PORT. */
function portVariable(name: string): string {
  const ports = Object.keys(info(name).spec).filter((k) => k.endsWith('_PORT'));
  if (ports.length !== 1) throw new Error(`${name}: expected one *_PORT variable in its env spec, found ${ports.join(', ')}`);
  return ports[0] as string;
}

const entryPoint = (name: string) => `services/${name}/dist/index.js`;
const TEST_TOKEN = 'deploy-artifacts-test-token-0123456789';

/** What the process's loadEnv makes of these variables (throws naming a bad one). */
function loadFor(name: string, source: Record<string, string>): EnvRecord {
  return info(name).load(source);
}

function numberOf(env: EnvRecord, key: string): number {
  const value = env[key];
  if (typeof value !== 'number') throw new Error(`${key} is not a number: ${String(value)}`);
  return value;
}

function read(file: string): string {
  return readFileSync(path.join(ROOT, file), 'utf8');
}

const isFile = (p: string) => existsSync(p) && statSync(p).isFile();
const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

/** Seconds of a Go-style duration as compose and Prometheus write them: 30s, 1m30s, 1.5s, 500ms. */
function seconds(duration: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001, us: 1e-6, ns: 1e-9 };
  const parts = [...duration.matchAll(/(\d+(?:\.\d+)?)(h|ms|us|ns|m|s)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== duration) throw new Error(`not a duration: ${duration}`);
  return parts.reduce((sum, p) => sum + Number(p[1]) * (units[p[2] as string] as number), 0);
}

// ------------------------------------------------------------------------------- compose

/**
 * Compose's interpolation: $$, $VAR, ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error},
 * ${VAR?error}, ${VAR:+alt}, ${VAR+alt}, applied to every string value.
 */
function interpolate(value: string, vars: Readonly<Record<string, string | undefined>>, where: string): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (whole, braced: string | undefined, op: string | undefined, arg: string | undefined, bare: string | undefined) => {
    if (whole === '$$') return '$';
    const name = (braced ?? bare) as string;
    const v = vars[name];
    const set = v !== undefined;
    const nonEmpty = set && v !== '';
    const alt = interpolate(arg ?? '', vars, where);
    switch (op) {
      case undefined:
        return v ?? '';
      case ':-':
        return nonEmpty ? v : alt;
      case '-':
        return set ? v : alt;
      case ':?':
      case '?':
        if (op === ':?' ? nonEmpty : set) return v as string;
        throw new Error(`${where}: required variable ${name} is missing a value: ${alt}`);
      case ':+':
        return nonEmpty ? alt : '';
      case '+':
        return set ? alt : '';
      default:
        throw new Error(`${where}: unknown interpolation ${whole}`);
    }
  });
}

function interpolateAll(node: unknown, vars: Readonly<Record<string, string | undefined>>, where: string): unknown {
  if (typeof node === 'string') return interpolate(node, vars, where);
  if (Array.isArray(node)) return node.map((n, i) => interpolateAll(n, vars, `${where}[${i}]`));
  if (node !== null && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, interpolateAll(v, vars, `${where}.${k}`)]));
  return node;
}

interface ComposeService {
  image?: string;
  build?: { context?: string; dockerfile?: string } | string;
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: (string | { target: number; published?: number | string })[];
  volumes?: (string | { type?: string; source?: string; target: string })[];
  healthcheck?: { test?: string[] | string };
  deploy?: { replicas?: number };
  stop_grace_period?: string;
  depends_on?: Record<string, { condition?: string }> | string[];
}

interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

const COMPOSE_VARS = { ADMIN_TOKEN: TEST_TOKEN };

function loadCompose(vars: Readonly<Record<string, string | undefined>> = COMPOSE_VARS): ComposeFile {
  // YAML 1.1 merge keys (<<: *anchor), as compose reads them.
  return interpolateAll(parse(read('docker-compose.yml'), { merge: true }), vars, 'docker-compose.yml') as ComposeFile;
}

function composeEnv(service: ComposeService, where: string): Record<string, string> {
  const env: Record<string, string> = {};
  if (Array.isArray(service.environment)) {
    for (const entry of service.environment) {
      const eq = entry.indexOf('=');
      if (eq === -1) throw new Error(`${where}: environment entry ${entry} takes its value from the host; give it one`);
      env[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
    return env;
  }
  for (const [key, value] of Object.entries(service.environment ?? {})) {
    // Compose refuses booleans in environment maps; null would mean "from the host".
    if (typeof value === 'boolean' || value === null) throw new Error(`${where}: environment ${key} must be a string or a number, got ${String(value)}`);
    env[key] = String(value);
  }
  return env;
}

/** [host path, container path] of the bind mounts of a service. */
function bindMounts(service: ComposeService): [string, string][] {
  const out: [string, string][] = [];
  for (const v of service.volumes ?? []) {
    if (typeof v === 'string') {
      const [source, target] = v.split(':');
      if (source !== undefined && target !== undefined && (source.startsWith('.') || source.startsWith('/'))) out.push([source, target]);
    } else if (v.type === 'bind' && v.source !== undefined) out.push([v.source, v.target]);
  }
  return out;
}

function namedVolumes(service: ComposeService): string[] {
  return (service.volumes ?? []).flatMap((v) => {
    const source = typeof v === 'string' ? v.split(':')[0] : v.type === 'volume' ? v.source : undefined;
    return source !== undefined && !source.startsWith('.') && !source.startsWith('/') ? [source] : [];
  });
}

/** The repository file that a path inside the container comes from, through the service's bind mounts. */
function hostPathOf(service: ComposeService, containerPath: string): string | undefined {
  for (const [source, target] of bindMounts(service)) {
    if (containerPath === target) return path.resolve(ROOT, source);
    if (containerPath.startsWith(`${target}/`)) return path.resolve(ROOT, source, containerPath.slice(target.length + 1));
  }
  return undefined;
}

/** [published, container] port pairs of a service. */
function publishedPorts(service: ComposeService): [number | undefined, number][] {
  return (service.ports ?? []).map((p) => {
    if (typeof p !== 'string') return [p.published === undefined ? undefined : Number(p.published), p.target];
    const parts = p.replace(/\/(tcp|udp)$/, '').split(':');
    const container = Number(parts[parts.length - 1]);
    return [parts.length > 1 ? Number(parts[parts.length - 2]) : undefined, container];
  });
}

/** The URL a compose healthcheck fetches. */
function healthcheckUrl(service: ComposeService): URL {
  const test = service.healthcheck?.test;
  const text = Array.isArray(test) ? test.join(' ') : (test ?? '');
  const m = /https?:\/\/[^\s'"`)]+/.exec(text);
  if (!m) throw new Error(`no URL in healthcheck ${text}`);
  return new URL(m[0]);
}

describe('docker-compose.yml', () => {
  const compose = loadCompose();
  const envOf = (name: string) => composeEnv(compose.services[name] as ComposeService, `services.${name}`);

  it('runs every process, each with its own entry point', () => {
    for (const name of NAMES) {
      const service = compose.services[name];
      expect(service).toBeDefined();
      expect(service?.command).toEqual(['node', entryPoint(name)]);
      expect(isFile(path.join(ROOT, 'services', name, 'src/index.ts'))).toBe(true);
    }
  });

  it('builds the eventrelay image from the repository Dockerfile', () => {
    for (const name of NAMES) {
      const service = compose.services[name] as ComposeService;
      const build = typeof service.build === 'string' ? { context: service.build } : service.build;
      expect(build).toBeDefined();
      expect(isFile(path.resolve(ROOT, build?.context ?? '.', build?.dockerfile ?? 'Dockerfile'))).toBe(true);
    }
    // One image for all five, built once.
    expect(new Set(NAMES.map((n) => compose.services[n]?.image)).size).toBe(1);
  });

  it('refuses to start without ADMIN_TOKEN', () => {
    expect(() => loadCompose({})).toThrow(/ADMIN_TOKEN/);
    expect(() => loadCompose({ ADMIN_TOKEN: '' })).toThrow(/ADMIN_TOKEN/);
  });

  it('sets only variables each process reads, with values its loadEnv accepts', () => {
    for (const name of NAMES) {
      const env = envOf(name);
      const unknown = Object.keys(env).filter((k) => !(k in info(name).spec));
      expect({ service: name, unknown }).toEqual({ service: name, unknown: [] });
      expect(() => loadFor(name, env)).not.toThrow();
    }
  });

  it('checks health on the port each process listens on, and publishes the intake on 8080 and the admin API on 8081', () => {
    for (const name of NAMES) {
      const service = compose.services[name] as ComposeService;
      const env = loadFor(name, envOf(name));
      const url = healthcheckUrl(service);
      expect({ service: name, path: url.pathname, port: Number(url.port) }).toEqual({ service: name, path: '/healthz', port: numberOf(env, portVariable(name)) });
    }
    expect(publishedPorts(compose.services['ingest'] as ComposeService)).toEqual([[8080, numberOf(loadFor('ingest', envOf('ingest')), 'INGEST_PORT')]]);
    expect(publishedPorts(compose.services['admin'] as ComposeService)).toEqual([[8081, numberOf(loadFor('admin', envOf('admin')), 'ADMIN_PORT')]]);
    // The workers publish nothing (webhook-delivery runs two replicas: a fixed host port would collide).
    for (const name of ['router', 'webhook-delivery', 'audiences']) expect(publishedPorts(compose.services[name] as ComposeService)).toEqual([]);
  });

  it('points every process at the redis service, started healthy first', () => {
    const redis = compose.services['redis'] as ComposeService;
    expect(redis.healthcheck?.test).toBeDefined();
    for (const name of NAMES) {
      const url = new URL(loadFor(name, envOf(name))['REDIS_URL'] as string);
      expect(url.hostname).toBe('redis');
      expect(url.port === '' ? 6379 : Number(url.port)).toBe(6379);
      const dependsOn = compose.services[name]?.depends_on as Record<string, { condition?: string }>;
      expect(dependsOn['redis']?.condition).toBe('service_healthy');
    }
  });

  it('runs Redis with AOF fsynced every second and noeviction, on a volume', () => {
    const redis = compose.services['redis'] as ComposeService;
    const args = Array.isArray(redis.command) ? redis.command : (redis.command ?? '').split(/\s+/);
    const setting = (key: string) => args[args.indexOf(`--${key}`) + 1];
    expect(args[0]).toBe('redis-server');
    expect(setting('appendonly')).toBe('yes');
    expect(setting('appendfsync')).toBe('everysec');
    expect(setting('maxmemory-policy')).toBe('noeviction');
    // /data is the working directory, so the AOF, of the official image.
    expect((redis.volumes ?? []).some((v) => typeof v === 'string' && /^[^./][^:]*:\/data(:|$)/.test(v))).toBe(true);
  });

  it('gives every process the same Redis and key prefix, or they would not see each other’s queues', () => {
    const shared = NAMES.map((name) => {
      const env = loadFor(name, envOf(name));
      return `${env['REDIS_URL'] as string} ${env['EVENTRELAY_PREFIX'] as string}`;
    });
    expect(new Set(shared).size).toBe(1);
  });

  it('runs two webhook-delivery replicas and gives them longer to stop than an attempt can take', () => {
    const delivery = compose.services['webhook-delivery'] as ComposeService;
    expect(delivery.deploy?.replicas).toBe(2);
    const timeoutMs = numberOf(loadFor('webhook-delivery', envOf('webhook-delivery')), 'DELIVERY_TIMEOUT_MS');
    expect(delivery.stop_grace_period).toBeDefined();
    expect(seconds(delivery.stop_grace_period as string)).toBeGreaterThan(timeoutMs / 1000 + 5);
    // Each of its two shutdown steps may take DELIVERY_TIMEOUT_MS + 5 s (docs/deployment.md).
    expect(seconds(delivery.stop_grace_period as string)).toBeGreaterThanOrEqual(2 * (timeoutMs / 1000 + 5));
    for (const name of NAMES) expect(seconds(compose.services[name]?.stop_grace_period ?? '10s')).toBeGreaterThan(5);
  });

  it('mounts files and directories that exist, and declares every named volume', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      for (const [source] of bindMounts(service)) expect({ service: name, source, exists: existsSync(path.resolve(ROOT, source)) }).toEqual({ service: name, source, exists: true });
      for (const volume of namedVolumes(service)) expect(Object.keys(compose.volumes ?? {})).toContain(volume);
    }
    const prometheus = compose.services['prometheus'] as ComposeService;
    expect(hostPathOf(prometheus, '/etc/prometheus/prometheus.yml')).toBe(path.join(ROOT, 'ops/prometheus/prometheus.yml'));
    const grafana = compose.services['grafana'] as ComposeService;
    expect(isDir(hostPathOf(grafana, '/etc/grafana/provisioning') ?? '')).toBe(true);
    // The admin service's config file is one of its mounts.
    const admin = compose.services['admin'] as ComposeService;
    const configPath = envOf('admin')['EVENTRELAY_CONFIG'];
    if (configPath !== undefined) expect(isFile(hostPathOf(admin, configPath) ?? '')).toBe(true);
  });

  it('starts Prometheus on the config file it mounts and Grafana with the dashboard where its provider reads', () => {
    const prometheus = compose.services['prometheus'] as ComposeService;
    const flags = Array.isArray(prometheus.command) ? prometheus.command : [];
    const configFile = flags.find((f) => f.startsWith('--config.file='))?.slice('--config.file='.length);
    expect(configFile).toBeDefined();
    expect(hostPathOf(prometheus, configFile as string)).toBe(path.join(ROOT, 'ops/prometheus/prometheus.yml'));

    const grafana = compose.services['grafana'] as ComposeService;
    const provisioning = hostPathOf(grafana, '/etc/grafana/provisioning') as string;
    const providers = parse(readFileSync(path.join(provisioning, 'dashboards/eventrelay.yml'), 'utf8')) as { providers: { type: string; options: { path: string } }[] };
    const dashboardsDir = providers.providers[0]?.options.path as string;
    expect(hostPathOf(grafana, `${dashboardsDir}/eventrelay.json`)).toBe(path.join(ROOT, 'ops/grafana/eventrelay.json'));
    const datasources = parse(readFileSync(path.join(provisioning, 'datasources/prometheus.yml'), 'utf8')) as { datasources: { type: string; url: string }[] };
    const ds = datasources.datasources[0];
    expect(ds?.type).toBe('prometheus');
    const dsUrl = new URL(ds?.url as string);
    expect(Object.keys(compose.services)).toContain(dsUrl.hostname);
    // Prometheus listens on its default 9090 unless told otherwise.
    const listen = flags.find((f) => f.startsWith('--web.listen-address='))?.split(':').pop() ?? '9090';
    expect(dsUrl.port).toBe(listen);
  });
});

// ------------------------------------------------------------------------------- prometheus.yml

interface ScrapeConfig {
  job_name: string;
  metrics_path?: string;
  static_configs?: { targets: string[] }[];
  dns_sd_configs?: { names: string[]; type?: string; port: number }[];
}

describe('ops/prometheus/prometheus.yml', () => {
  const config = parse(read('ops/prometheus/prometheus.yml')) as { global?: { scrape_interval?: string }; rule_files?: string[]; scrape_configs: ScrapeConfig[] };
  const compose = loadCompose();

  it('scrapes each process as job eventrelay-<name>, at the host and port compose runs it on', () => {
    for (const name of NAMES) {
      const jobs = config.scrape_configs.filter((j) => j.job_name === `eventrelay-${name}`);
      expect(jobs).toHaveLength(1);
      const job = jobs[0] as ScrapeConfig;
      expect(job.metrics_path ?? '/metrics').toBe('/metrics');
      const port = numberOf(loadFor(name, composeEnv(compose.services[name] as ComposeService, name)), portVariable(name));
      const targets = [
        ...(job.static_configs ?? []).flatMap((s) => s.targets),
        ...(job.dns_sd_configs ?? []).flatMap((d) => {
          expect(d.type ?? 'SRV').toBe('A');
          return d.names.map((n) => `${n}:${d.port}`);
        }),
      ];
      expect({ job: job.job_name, targets }).toEqual({ job: job.job_name, targets: [`${name}:${port}`] });
    }
  });

  it("matches Grafana's data source time interval to the scrape interval ($__rate_interval depends on it)", () => {
    const datasources = parse(read('ops/grafana/provisioning/datasources/prometheus.yml')) as { datasources: { jsonData?: { timeInterval?: string } }[] };
    const interval = config.global?.scrape_interval ?? '1m';
    expect(datasources.datasources[0]?.jsonData?.timeInterval).toBe(interval);
  });

  it('loads the alert rules from where compose mounts ops/prometheus/alerts.yml', () => {
    const prometheus = compose.services['prometheus'] as ComposeService;
    expect(config.rule_files?.length).toBeGreaterThan(0);
    const sources = (config.rule_files ?? []).map((f) => hostPathOf(prometheus, f));
    expect(sources).toEqual([path.join(ROOT, 'ops/prometheus/alerts.yml')]);
  });

  it('defines every job the alerts and the dashboard select', () => {
    const jobs = config.scrape_configs.map((j) => j.job_name);
    const eventrelayJobs = jobs.filter((j) => j.startsWith('eventrelay-'));
    expect(eventrelayJobs.sort()).toEqual(NAMES.map((n) => `eventrelay-${n}`).sort());
    let checked = 0;
    for (const q of opsQueries()) {
      for (const s of promqlSelectors(q.expr)) {
        for (const m of s.matchers.filter((x) => x.name === 'job')) {
          checked++;
          if (m.op === '=') expect({ where: q.where, job: m.value, defined: jobs.includes(m.value) }).toEqual({ where: q.where, job: m.value, defined: true });
          if (m.op === '=~') {
            const re = new RegExp(`^(?:${m.value})$`);
            // job=~"eventrelay-.*" must take in every process and nothing else.
            expect({ where: q.where, matched: jobs.filter((j) => re.test(j)).sort() }).toEqual({ where: q.where, matched: eventrelayJobs.sort() });
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(0);
  });
});

// ------------------------------------------------------------------------------- k8s

interface Probe {
  httpGet?: { path: string; port: number | string };
  tcpSocket?: { port: number | string };
  exec?: { command: string[] };
}

interface EnvEntry {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string }; fieldRef?: unknown; resourceFieldRef?: unknown };
}

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvEntry[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: { name: string; mountPath: string }[];
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
}

interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: { containers: Container[]; initContainers?: Container[]; terminationGracePeriodSeconds?: number; securityContext?: { runAsNonRoot?: boolean; runAsUser?: number } };
}

interface Workload extends Manifest {
  spec: { replicas?: number; selector: { matchLabels: Record<string, string> }; template: PodTemplate; volumeClaimTemplates?: { metadata: { name: string } }[] };
}

interface Service extends Manifest {
  spec: { selector: Record<string, string>; ports: { name?: string; port: number; targetPort?: number | string }[]; clusterIP?: string };
}

const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'PersistentVolume', 'StorageClass', 'PriorityClass', 'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'APIService']);
const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job']);

const matchesLabels = (selector: Record<string, string>, labels: Record<string, string>) => Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

/** Kubernetes quantities in bytes: 512Mi, 1Gi, 1G, 1000. */
function bytes(quantity: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity);
  if (!m) throw new Error(`not a memory quantity: ${quantity}`);
  const unit: Record<string, number> = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Number(m[1]) * (m[2] ? (unit[m[2]] as number) : 1);
}

/** Redis memory sizes in bytes: 768mb, 3gb, 1g (= 10^9), 100 (bytes). */
function redisBytes(size: string): number {
  const m = /^(\d+)(kb|mb|gb|k|m|g)?$/i.exec(size);
  if (!m) throw new Error(`not a Redis memory size: ${size}`);
  const unit: Record<string, number> = { kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3, k: 1e3, m: 1e6, g: 1e9 };
  return Number(m[1]) * (m[2] ? (unit[m[2].toLowerCase()] as number) : 1);
}

/** `$(VAR)` in a command or args, expanded by the kubelet from the container's env. */
function expandK8s(value: string, env: Record<string, string>): string {
  return value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string) => {
    if (!(name in env)) throw new Error(`${whole} refers to no env variable of the container (it would be passed on literally)`);
    return env[name] as string;
  });
}

function splitImage(image: string): { name: string; tag?: string } {
  const at = image.indexOf('@');
  const rest = at === -1 ? image : image.slice(0, at);
  const colon = rest.lastIndexOf(':');
  return colon > rest.lastIndexOf('/') ? { name: rest.slice(0, colon), tag: rest.slice(colon + 1) } : { name: rest };
}

class Rendered {
  constructor(readonly objects: Manifest[]) {}

  all<T extends Manifest>(kind: string): T[] {
    return this.objects.filter((o) => o.kind === kind) as T[];
  }

  one<T extends Manifest>(kind: string, name: string): T {
    const found = this.objects.filter((o) => o.kind === kind && o.metadata.name === name);
    if (found.length !== 1) throw new Error(`expected one ${kind} ${name}, found ${found.length}`);
    return found[0] as T;
  }

  deployment(process: string): Workload {
    return this.one<Workload>('Deployment', `eventrelay-${process}`);
  }

  container(process: string): Container {
    const containers = this.deployment(process).spec.template.spec.containers;
    if (containers.length !== 1) throw new Error(`eventrelay-${process}: expected one container, found ${containers.length}`);
    return containers[0] as Container;
  }

  /** The environment a container starts with: its envFrom ConfigMaps, then env (which wins); Secrets as a test token. */
  environment(container: Container, where: string): Record<string, string> {
    const env: Record<string, string> = {};
    for (const from of container.envFrom ?? []) {
      if (!from.configMapRef) throw new Error(`${where}: envFrom other than configMapRef is not checked (${JSON.stringify(from)})`);
      const data = this.one<Manifest & { data?: Record<string, string> }>('ConfigMap', from.configMapRef.name).data ?? {};
      Object.assign(env, data);
    }
    for (const e of container.env ?? []) {
      if (e.value !== undefined) env[e.name] = e.value;
      else if (e.valueFrom?.secretKeyRef) env[e.name] = TEST_TOKEN;
      else if (e.valueFrom?.configMapKeyRef) {
        const data = this.one<Manifest & { data?: Record<string, string> }>('ConfigMap', e.valueFrom.configMapKeyRef.name).data ?? {};
        const value = data[e.valueFrom.configMapKeyRef.key];
        if (value === undefined) throw new Error(`${where}: ${e.name} refers to a missing key ${e.valueFrom.configMapKeyRef.key}`);
        env[e.name] = value;
      } else throw new Error(`${where}: ${e.name} has no value this test can resolve (${JSON.stringify(e.valueFrom)})`);
    }
    return env;
  }

  /** Every variable name a container gets: env entries and the keys of its envFrom ConfigMaps. */
  variableNames(container: Container): string[] {
    const names = (container.env ?? []).map((e) => e.name);
    for (const from of container.envFrom ?? []) {
      if (from.configMapRef) names.push(...Object.keys(this.one<Manifest & { data?: Record<string, string> }>('ConfigMap', from.configMapRef.name).data ?? {}));
    }
    return names;
  }

  workloads(): Workload[] {
    return this.objects.filter((o) => WORKLOAD_KINDS.has(o.kind)) as Workload[];
  }
}

/** The containerPort a probe or Service names, by number or by the container port's name. */
function resolvePort(container: Container, port: number | string | undefined, where: string): number {
  if (typeof port === 'number') {
    if (!(container.ports ?? []).some((p) => p.containerPort === port)) throw new Error(`${where}: port ${port} is not a containerPort of ${container.name}`);
    return port;
  }
  const named = (container.ports ?? []).find((p) => p.name === port);
  if (!named) throw new Error(`${where}: ${container.name} has no port named ${String(port)}`);
  return named.containerPort;
}

const RENDERS: [string, string][] = [
  ['k8s/base', 'k8s/base'],
  ['k8s/overlays/prod', 'k8s/overlays/prod'],
];

describe.each(RENDERS)('%s rendered', (_label, dir) => {
  const r = new Rendered(renderKustomization(path.join(ROOT, dir)));

  it('has one Deployment and one Service per process, each selecting its own pods', () => {
    expect(r.all('Deployment').map((d) => d.metadata.name).sort()).toEqual(NAMES.map((n) => `eventrelay-${n}`).sort());
    for (const name of NAMES) {
      const d = r.deployment(name);
      expect(matchesLabels(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true);
      const svc = r.one<Service>('Service', `eventrelay-${name}`);
      expect(matchesLabels(svc.spec.selector, d.spec.template.metadata.labels)).toBe(true);
      // and no other process's pods
      for (const other of NAMES.filter((n) => n !== name)) expect(matchesLabels(svc.spec.selector, r.deployment(other).spec.template.metadata.labels)).toBe(false);
    }
  });

  it('runs each process with its entry point', () => {
    for (const name of NAMES) {
      const c = r.container(name);
      expect(c.command).toEqual(['node', entryPoint(name)]);
      expect(c.args ?? []).toEqual([]);
      expect(isFile(path.join(ROOT, 'services', name, 'src/index.ts'))).toBe(true);
    }
  });

  it('sets only variables each process reads, and its environment loads', () => {
    for (const name of NAMES) {
      const c = r.container(name);
      const unknown = r.variableNames(c).filter((k) => !(k in info(name).spec));
      expect({ process: name, unknown }).toEqual({ process: name, unknown: [] });
      expect(() => loadFor(name, r.environment(c, name))).not.toThrow();
    }
  });

  it('takes ADMIN_TOKEN from a Secret, never from a plain value', () => {
    const token = (r.container('admin').env ?? []).filter((e) => e.name === 'ADMIN_TOKEN');
    expect(token).toHaveLength(1);
    expect(token[0]?.value).toBeUndefined();
    expect(token[0]?.valueFrom?.secretKeyRef).toEqual({ name: expect.any(String), key: expect.any(String) });
    for (const cm of r.all<Manifest & { data?: Record<string, string> }>('ConfigMap')) expect(Object.keys(cm.data ?? {})).not.toContain('ADMIN_TOKEN');
  });

  it('points every process at the Redis Service, all under the prefix compose uses', () => {
    const compose = loadCompose();
    const composePrefix = loadFor('ingest', composeEnv(compose.services['ingest'] as ComposeService, 'ingest'))['EVENTRELAY_PREFIX'];
    for (const name of NAMES) {
      const env = loadFor(name, r.environment(r.container(name), name));
      const url = new URL(env['REDIS_URL'] as string);
      const svc = r.one<Service>('Service', url.hostname);
      expect(svc.spec.ports.map((p) => p.port)).toContain(url.port === '' ? 6379 : Number(url.port));
      // One prefix for every process (they share queues), the one docs/deployment.md gives everywhere.
      expect({ process: name, prefix: env['EVENTRELAY_PREFIX'] }).toEqual({ process: name, prefix: composePrefix });
    }
  });

  it('probes /readyz and /healthz on the port the process listens on, and the Service targets that port', () => {
    for (const name of NAMES) {
      const c = r.container(name);
      const port = numberOf(loadFor(name, r.environment(c, name)), portVariable(name));
      expect(c.readinessProbe?.httpGet?.path).toBe('/readyz');
      expect(c.livenessProbe?.httpGet?.path).toBe('/healthz');
      expect(resolvePort(c, c.readinessProbe?.httpGet?.port, `${name} readiness`)).toBe(port);
      expect(resolvePort(c, c.livenessProbe?.httpGet?.port, `${name} liveness`)).toBe(port);
      if (c.startupProbe) {
        expect(c.startupProbe.httpGet?.path).toBe('/healthz');
        expect(resolvePort(c, c.startupProbe.httpGet?.port, `${name} startup`)).toBe(port);
      }
      const svc = r.one<Service>('Service', `eventrelay-${name}`);
      expect(svc.spec.ports.length).toBeGreaterThan(0);
      for (const p of svc.spec.ports) expect(resolvePort(c, p.targetPort ?? p.port, `Service eventrelay-${name}`)).toBe(port);
    }
  });

  it('sets resource requests and limits on every container', () => {
    for (const w of r.workloads()) {
      for (const c of [...w.spec.template.spec.containers, ...(w.spec.template.spec.initContainers ?? [])]) {
        const where = `${w.kind} ${w.metadata.name} container ${c.name}`;
        expect({ where, requests: Object.keys(c.resources?.requests ?? {}).sort(), limits: Object.keys(c.resources?.limits ?? {}).sort() }).toEqual({ where, requests: ['cpu', 'memory'], limits: ['cpu', 'memory'] });
        expect(bytes(c.resources?.requests?.['memory'] as string)).toBeLessThanOrEqual(bytes(c.resources?.limits?.['memory'] as string));
      }
    }
  });

  it("has a PodDisruptionBudget selecting each Deployment's pods and no other's", () => {
    const pdbs = r.all<Manifest & { spec: { selector: { matchLabels: Record<string, string> }; maxUnavailable?: unknown; minAvailable?: unknown } }>('PodDisruptionBudget');
    expect(pdbs.every((p) => p.apiVersion === 'policy/v1')).toBe(true);
    for (const name of NAMES) {
      const labels = r.deployment(name).spec.template.metadata.labels;
      const mine = pdbs.filter((p) => matchesLabels(p.spec.selector.matchLabels, labels));
      expect({ process: name, pdbs: mine.length }).toEqual({ process: name, pdbs: 1 });
      const pdb = mine[0] as (typeof pdbs)[number];
      expect(pdb.spec.maxUnavailable ?? pdb.spec.minAvailable).toBeDefined();
      for (const other of NAMES.filter((n) => n !== name)) expect(matchesLabels(pdb.spec.selector.matchLabels, r.deployment(other).spec.template.metadata.labels)).toBe(false);
    }
  });

  it('scales webhook-delivery with an autoscaling/v2 HorizontalPodAutoscaler on CPU, and the Deployment leaves replicas to it', () => {
    const hpas = r.all<Manifest & { spec: { scaleTargetRef: { apiVersion: string; kind: string; name: string }; minReplicas: number; maxReplicas: number; metrics: { type: string; resource?: { name: string } }[] } }>('HorizontalPodAutoscaler');
    const hpa = hpas.filter((h) => h.spec.scaleTargetRef.kind === 'Deployment' && h.spec.scaleTargetRef.name === 'eventrelay-webhook-delivery');
    expect(hpa).toHaveLength(1);
    expect(hpa[0]?.apiVersion).toBe('autoscaling/v2');
    expect(hpa[0]?.spec.scaleTargetRef.apiVersion).toBe('apps/v1');
    expect(hpa[0]?.spec.metrics.some((m) => m.type === 'Resource' && m.resource?.name === 'cpu')).toBe(true);
    expect(hpa[0]?.spec.minReplicas).toBeGreaterThanOrEqual(1);
    expect(hpa[0]?.spec.maxReplicas).toBeGreaterThanOrEqual(hpa[0]?.spec.minReplicas ?? Infinity);
    // CPU utilization is measured against requests.
    expect(r.container('webhook-delivery').resources?.requests?.['cpu']).toBeDefined();
    expect(r.deployment('webhook-delivery').spec.replicas).toBeUndefined();
  });

  it('runs Redis as a StatefulSet with AOF fsynced every second, noeviction, maxmemory under its limit, and its dir on a volumeClaimTemplate', () => {
    const sts = r.all<Workload>('StatefulSet').filter((s) => s.spec.template.spec.containers.some((c) => splitImage(c.image).name === 'redis'));
    expect(sts).toHaveLength(1);
    const redis = sts[0] as Workload;
    const c = redis.spec.template.spec.containers.find((x) => splitImage(x.image).name === 'redis') as Container;
    const env = r.environment({ ...c, envFrom: c.envFrom ?? [] }, 'redis');
    const argv = [...(c.command ?? []), ...(c.args ?? [])].map((a) => expandK8s(a, env));
    const setting = (key: string) => (argv.includes(`--${key}`) ? argv[argv.indexOf(`--${key}`) + 1] : undefined);
    expect(argv[0]).toBe('redis-server');
    expect(setting('appendonly')).toBe('yes');
    expect(setting('appendfsync')).toBe('everysec');
    expect(setting('maxmemory-policy')).toBe('noeviction');
    const maxmemory = setting('maxmemory');
    expect(maxmemory).toBeDefined();
    expect(redisBytes(maxmemory as string)).toBeLessThan(bytes(c.resources?.limits?.['memory'] as string));
    // /data is the official image's working directory, where Redis writes unless told otherwise.
    const dir = setting('dir') ?? '/data';
    const claims = (redis.spec.volumeClaimTemplates ?? []).map((t) => t.metadata.name);
    expect(claims.length).toBeGreaterThan(0);
    expect((c.volumeMounts ?? []).filter((m) => m.mountPath === dir).map((m) => claims.includes(m.name))).toEqual([true]);
    const svc = r.one<Service>('Service', redis.metadata.name);
    expect(matchesLabels(svc.spec.selector, redis.spec.template.metadata.labels)).toBe(true);
  });

  it('gives every process a grace period longer than its shutdown', () => {
    const delivery = r.deployment('webhook-delivery');
    const timeoutMs = numberOf(loadFor('webhook-delivery', r.environment(r.container('webhook-delivery'), 'webhook-delivery')), 'DELIVERY_TIMEOUT_MS');
    expect(delivery.spec.template.spec.terminationGracePeriodSeconds ?? 30).toBeGreaterThan(timeoutMs / 1000 + 5);
    // Each of its two shutdown steps may take DELIVERY_TIMEOUT_MS + 5 s (docs/deployment.md).
    expect(delivery.spec.template.spec.terminationGracePeriodSeconds ?? 30).toBeGreaterThanOrEqual(2 * (timeoutMs / 1000 + 5));
    for (const name of NAMES) {
      const pod = r.deployment(name).spec.template.spec;
      const grace = pod.terminationGracePeriodSeconds ?? 30;
      expect(grace).toBeGreaterThan(5);
      // A preStop sleep is spent inside the grace period.
      const preStop = r.container(name).lifecycle?.preStop?.exec?.command;
      if (preStop?.[0] === 'sleep') expect(grace).toBeGreaterThan(Number(preStop[1]) + 5);
    }
  });

  it('has a ServiceMonitor selecting every eventrelay Service by its labels, scraping /metrics on a port each Service names', () => {
    const monitors = r.all<Manifest & { spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string; path?: string }[]; namespaceSelector?: unknown } }>('ServiceMonitor');
    expect(monitors).toHaveLength(1);
    const monitor = monitors[0] as (typeof monitors)[number];
    const endpointPorts = monitor.spec.endpoints.map((e) => e.port);
    for (const e of monitor.spec.endpoints) expect(e.path ?? '/metrics').toBe('/metrics');
    const services = NAMES.map((n) => r.one<Service>('Service', `eventrelay-${n}`));
    for (const svc of services) {
      expect({ service: svc.metadata.name, selected: matchesLabels(monitor.spec.selector.matchLabels, svc.metadata.labels ?? {}) }).toEqual({ service: svc.metadata.name, selected: true });
      expect({ service: svc.metadata.name, scraped: svc.spec.ports.filter((p) => p.name !== undefined && endpointPorts.includes(p.name)).length }).toEqual({ service: svc.metadata.name, scraped: 1 });
    }
    // Every endpoint's port name is one of the Services'.
    for (const port of endpointPorts) expect(services.some((s) => s.spec.ports.some((p) => p.name === port))).toBe(true);
    // Only eventrelay Services: Redis exports no /metrics.
    for (const svc of r.all<Service>('Service').filter((s) => !services.includes(s))) expect(matchesLabels(monitor.spec.selector.matchLabels, svc.metadata.labels ?? {})).toBe(false);
  });

  it('runs every pod as a non-root user', () => {
    for (const w of r.workloads()) {
      const pod = w.spec.template.spec;
      for (const c of pod.containers) {
        const nonRoot = c.securityContext?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot;
        const uid = c.securityContext?.runAsUser ?? pod.securityContext?.runAsUser;
        expect({ where: `${w.metadata.name}/${c.name}`, nonRoot, rootUid: uid === 0 }).toEqual({ where: `${w.metadata.name}/${c.name}`, nonRoot: true, rootUid: false });
      }
    }
  });
});

describe('k8s/overlays/prod', () => {
  const base = new Rendered(renderKustomization(path.join(ROOT, 'k8s/base')));
  const prod = new Rendered(renderKustomization(path.join(ROOT, 'k8s/overlays/prod')));
  const overlay = parse(read('k8s/overlays/prod/kustomization.yaml')) as {
    namespace: string;
    images?: { name: string; newName?: string; newTag?: string; digest?: string }[];
    replicas?: { name: string; count: number }[];
  };

  it('puts every namespaced object in namespace eventrelay', () => {
    expect(overlay.namespace).toBe('eventrelay');
    for (const o of prod.objects.filter((x) => !CLUSTER_SCOPED.has(x.kind))) expect({ object: `${o.kind}/${o.metadata.name}`, namespace: o.metadata.namespace }).toEqual({ object: `${o.kind}/${o.metadata.name}`, namespace: 'eventrelay' });
  });

  it("replaces the images as the overlay's images say", () => {
    const entries = overlay.images ?? [];
    expect(entries.length).toBeGreaterThan(0);
    const used = new Set<string>();
    for (const w of base.workloads()) {
      const after = prod.one<Workload>(w.kind, w.metadata.name);
      w.spec.template.spec.containers.forEach((c, i) => {
        const ref = splitImage(c.image);
        const entry = entries.find((e) => e.name === ref.name);
        const image = after.spec.template.spec.containers[i]?.image;
        let expected = c.image;
        if (entry) {
          used.add(entry.name);
          const name = entry.newName ?? ref.name;
          expected = entry.digest ? `${name}@${entry.digest}` : `${name}:${entry.newTag ?? ref.tag}`;
        }
        expect({ container: `${w.metadata.name}/${c.name}`, image }).toEqual({ container: `${w.metadata.name}/${c.name}`, image: expected });
      });
    }
    // An entry whose name matches no image of the base would silently change nothing.
    expect([...used].sort()).toEqual(entries.map((e) => e.name).sort());
    // Every eventrelay process runs the pushed image, not the local build.
    const pushed = entries.find((e) => splitImage(base.container('ingest').image).name === e.name);
    for (const name of NAMES) expect(prod.container(name).image).toBe(`${pushed?.newName}:${pushed?.newTag}`);
  });

  it("sets the replicas the overlay's replicas say", () => {
    expect((overlay.replicas ?? []).length).toBeGreaterThan(0);
    for (const { name, count } of overlay.replicas ?? []) {
      const targets = prod.workloads().filter((w) => w.metadata.name === name);
      expect(targets).toHaveLength(1);
      expect(targets[0]?.spec.replicas).toBe(count);
    }
  });
});

// ------------------------------------------------------------------------------- Dockerfile

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

function dockerfileInstructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (pending === '' && (line.trim() === '' || line.trim().startsWith('#'))) continue;
    if (pending !== '' && line.trim().startsWith('#')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    const m = /^([A-Za-z]+)\s+(.*)$/s.exec(full);
    if (!m) throw new Error(`Dockerfile: cannot read ${full}`);
    out.push({ keyword: (m[1] as string).toUpperCase(), args: (m[2] as string).trim() });
  }
  return out;
}

interface Stage {
  readonly from: string;
  readonly name: string | undefined;
  readonly instructions: Instruction[];
  workdir: string | undefined;
  user: string | undefined;
}

function dockerStages(instructions: Instruction[]): Stage[] {
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const m = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!m) throw new Error(`Dockerfile: cannot read FROM ${ins.args}`);
      const parent = stages.find((s) => s.name === m[1]);
      stages.push({ from: m[1] as string, name: m[2], instructions: [], workdir: parent?.workdir, user: parent?.user });
      continue;
    }
    const stage = stages[stages.length - 1];
    if (!stage) {
      if (ins.keyword === 'ARG') continue;
      throw new Error(`Dockerfile: ${ins.keyword} before the first FROM`);
    }
    stage.instructions.push(ins);
    if (ins.keyword === 'WORKDIR') stage.workdir = ins.args.startsWith('/') ? ins.args : path.posix.join(stage.workdir ?? '/', ins.args);
    if (ins.keyword === 'USER') stage.user = ins.args;
  }
  return stages;
}

/**
 * Whether .dockerignore keeps a path out of the build context: patterns in order, the last one
 * matching the path or one of its parent directories wins, `!` re-includes (Docker's rules).
 */
function dockerIgnored(text: string): (file: string) => boolean {
  const rules = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pattern = path.posix.normalize((negate ? l.slice(1) : l).replace(/^\/+/, ''));
      const re = new RegExp(`^${pattern.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*\*\/|\*\*|\*|\?/g, (w) => ({ '**/': '(?:.*/)?', '**': '.*', '*': '[^/]*', '?': '[^/]' })[w] as string)}$`);
      return { negate, re };
    });
  return (file) => {
    const parts = file.split('/');
    const candidates = parts.map((_p, i) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const rule of rules) if (candidates.some((c) => rule.re.test(c))) excluded = !rule.negate;
    return excluded;
  };
}

/** The non-test TypeScript files under a directory. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** Module specifiers a file loads at run time (type-only imports and exports are erased). */
function runtimeImports(source: string): string[] {
  const specs: string[] = [];
  for (const m of source.matchAll(/^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm)) if (!m[2]) specs.push(m[3] as string);
  for (const m of source.matchAll(/\b(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/g)) specs.push(m[1] as string);
  return specs;
}

describe('Dockerfile', () => {
  const stages = dockerStages(dockerfileInstructions(read('Dockerfile')));
  const final = stages[stages.length - 1] as Stage;

  it('builds in stages and runs the final one from /app as a non-root user', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(final.workdir).toBe('/app');
    expect(final.user).toBeDefined();
    const user = (final.user as string).split(':')[0] as string;
    expect(['root', '0', '']).not.toContain(user);
    // Numeric, so that runAsNonRoot can verify it, and the uid the manifests run the pods as.
    expect(user).toMatch(/^\d+$/);
    const k8s = new Rendered(renderKustomization(path.join(ROOT, 'k8s/base')));
    for (const name of NAMES) expect(k8s.deployment(name).spec.template.spec.securityContext?.runAsUser ?? Number(user)).toBe(Number(user));
  });

  it('starts a real process by default', () => {
    const commands = final.instructions.filter((i) => i.keyword === 'CMD' || i.keyword === 'ENTRYPOINT');
    expect(commands.length).toBeGreaterThan(0);
    const argv = commands.flatMap((c) => JSON.parse(c.args) as string[]);
    const entry = argv.find((a) => /^services\/[^/]+\/dist\/index\.js$/.test(a));
    expect(entry).toBeDefined();
    const name = (entry as string).split('/')[1] as string;
    expect(NAMES).toContain(name);
    expect(argv[0]).toBe('node');
  });

  it('puts the compiled entry point of every process into the final image', () => {
    const copies = final.instructions.filter((i) => i.keyword === 'COPY').map((i) => i.args);
    const built = stages.slice(0, -1).flatMap((s) => s.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args));
    for (const name of NAMES) {
      // tsc compiles services/<name>/src to services/<name>/dist, so src/index.ts becomes dist/index.js.
      const tsconfig = JSON.parse(read(`services/${name}/tsconfig.json`)) as { compilerOptions: { rootDir: string; outDir: string } };
      expect(tsconfig.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist' });
      expect(built.some((run) => /\btsc\b/.test(run) && new RegExp(`services/${name}(\\s|/|$)`).test(run))).toBe(true);
      expect(copies.some((c) => new RegExp(`services/${name}/dist\\s+(/app/)?services/${name}/dist/?$`).test(c))).toBe(true);
    }
    for (const pkg of ['config', 'runtime']) expect(copies.some((c) => c.endsWith(`packages/${pkg}/dist`))).toBe(true);
  });

  it('copies the manifest of every workspace package the lockfile knows, so --frozen-lockfile installs', () => {
    const lock = parse(read('pnpm-lock.yaml')) as { importers: Record<string, unknown> };
    const manifests = stages
      .flatMap((s) => s.instructions)
      .filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from'))
      .flatMap((i) => {
        const parts = i.args.split(/\s+/).filter((a) => !a.startsWith('--'));
        return parts.slice(0, -1).filter((src) => src === 'package.json' || src.endsWith('/package.json'));
      })
      .map((src) => (src === 'package.json' ? '.' : path.posix.dirname(src)));
    expect(manifests.sort()).toEqual(Object.keys(lock.importers).sort());
  });

  it('sends what it copies from the build context through .dockerignore', () => {
    const ignored = dockerIgnored(read('.dockerignore'));
    const sources = stages.flatMap((s) => s.instructions).filter((i) => i.keyword === 'COPY' && !/--from=/.test(i.args));
    const files: string[] = [];
    for (const ins of sources) {
      for (const src of ins.args.split(/\s+/).filter((a) => !a.startsWith('--')).slice(0, -1)) {
        const abs = path.join(ROOT, src);
        expect({ source: src, exists: existsSync(abs) }).toEqual({ source: src, exists: true });
        if (isFile(abs)) files.push(src);
        // what tsc -b needs of a copied directory
        else for (const inner of ['tsconfig.json', 'src/index.ts']) if (isFile(path.join(abs, inner))) files.push(`${src}/${inner}`);
      }
    }
    for (const name of NAMES) files.push(`services/${name}/tsconfig.json`, `services/${name}/src/index.ts`, `services/${name}/src/env.ts`);
    expect(files.length).toBeGreaterThan(NAMES.length);
    expect(files.filter(ignored)).toEqual([]);
    // and the host's build output or dependencies never are
    for (const p of ['node_modules/x/index.js', 'services/ingest/dist/index.js', 'services/ingest/node_modules/x']) expect(ignored(p)).toBe(true);
  });

  it("declares every package the shipped code imports as a production dependency (the image has no devDependencies)", () => {
    const missing: string[] = [];
    for (const dir of [...NAMES.map((n) => `services/${n}`), 'packages/config', 'packages/runtime']) {
      const manifest = JSON.parse(read(`${dir}/package.json`)) as { dependencies?: Record<string, string> };
      const deps = new Set(Object.keys(manifest.dependencies ?? {}));
      for (const file of sourceFiles(path.join(ROOT, dir, 'src'))) {
        for (const spec of runtimeImports(readFileSync(file, 'utf8'))) {
          if (spec.startsWith('.') || spec.startsWith('node:')) continue;
          const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] as string);
          if (!deps.has(pkg)) missing.push(`${path.relative(ROOT, file)} imports ${spec}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('exposes the port every process listens on by default', () => {
    const exposed = final.instructions.filter((i) => i.keyword === 'EXPOSE').flatMap((i) => i.args.split(/\s+/).map((p) => Number(p.replace(/\/(tcp|udp)$/, ''))));
    for (const name of NAMES) {
      const defaults = loadFor(name, name === 'admin' ? { ADMIN_TOKEN: TEST_TOKEN } : {});
      expect(exposed).toContain(numberOf(defaults, portVariable(name)));
    }
  });
});

// ------------------------------------------------------------------------------- dashboard

describe('ops/grafana/eventrelay.json', () => {
  const dashboard = loadDashboard() as unknown as {
    panels: ReturnType<typeof dashboardPanels>;
    links?: { url?: string }[];
    templating: { list: { name: string; type: string; query?: unknown; datasource?: { uid?: string } }[] };
  };
  type PanelJson = ReturnType<typeof dashboardPanels>[number] & { gridPos?: Record<string, unknown>; datasource?: { type?: string; uid?: string }; targets?: { expr?: string; datasource?: { uid?: string } }[] };
  const panels = dashboardPanels(dashboard) as PanelJson[];
  const usesVariable = (uid: string | undefined) => uid === '${datasource}' || uid === '$datasource';

  it('is valid JSON with panels', () => {
    expect(() => JSON.parse(read('ops/grafana/eventrelay.json')) as unknown).not.toThrow();
    expect(panels.length).toBeGreaterThan(0);
  });

  it("gives every panel, rows' panels included, a query", () => {
    for (const p of panels.filter((x) => x.type !== 'row')) {
      const exprs = (p.targets ?? []).map((t) => t.expr ?? '').filter((e) => e.trim() !== '');
      expect({ panel: p.title, queries: exprs.length > 0 }).toEqual({ panel: p.title, queries: true });
    }
    // A row holds no queries of its own.
    for (const row of panels.filter((x) => x.type === 'row')) expect(row.targets ?? []).toEqual([]);
  });

  it('queries through the datasource template variable', () => {
    const variable = dashboard.templating.list.find((v) => v.name === 'datasource');
    expect(variable).toMatchObject({ type: 'datasource', query: 'prometheus' });
    for (const p of panels.filter((x) => x.type !== 'row')) {
      expect({ panel: p.title, uid: usesVariable(p.datasource?.uid) }).toEqual({ panel: p.title, uid: true });
      for (const t of p.targets ?? []) if (t.datasource !== undefined) expect({ panel: p.title, uid: usesVariable(t.datasource.uid) }).toEqual({ panel: p.title, uid: true });
    }
    for (const v of dashboard.templating.list.filter((x) => x.type === 'query')) expect(usesVariable(v.datasource?.uid)).toBe(true);
  });

  it('places every panel on the grid, with unique ids', () => {
    for (const p of panels) {
      const g = p.gridPos ?? {};
      expect({ panel: p.title, grid: ['h', 'w', 'x', 'y'].every((k) => typeof g[k] === 'number') }).toEqual({ panel: p.title, grid: true });
      expect((g['x'] as number) + (g['w'] as number)).toBeLessThanOrEqual(24);
    }
    const ids = panels.map((p) => p.id);
    expect(ids.every((id) => typeof id === 'number')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('links to documents of the repository that exist', () => {
    const links = (dashboard.links ?? []).map((l) => l.url ?? '');
    expect(links.length).toBeGreaterThan(0);
    for (const url of links) {
      const m = /\/blob\/[^/]+\/([^#?]+)/.exec(url);
      expect({ url, file: m !== null && isFile(path.join(ROOT, m[1] as string)) }).toEqual({ url, file: true });
    }
  });
});
