/**
 * What the deployment tests share: the processes with their env specs and loadEnv, the repository's
 * files, durations, and docker-compose.yml read with compose's variable interpolation.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ingestEnvSpec, loadEnv as loadIngestEnv } from '../../services/ingest/src/env';
import { routerEnvSpec, loadEnv as loadRouterEnv } from '../../services/router/src/env';
import { deliveryEnvSpec, loadEnv as loadDeliveryEnv } from '../../services/webhook-delivery/src/env';
import { audiencesEnvSpec, loadEnv as loadAudiencesEnv } from '../../services/audiences/src/env';
import { adminEnvSpec, loadEnv as loadAdminEnv } from '../../services/admin/src/env';
import { REPO_ROOT as ROOT } from './promql-names';

// ------------------------------------------------------------------------------- the processes

export type EnvRecord = Readonly<Record<string, unknown>>;

export interface ProcessInfo {
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
export const NAMES = Object.keys(PROCESSES);
export const info = (name: string): ProcessInfo => PROCESSES[name] as ProcessInfo;

/** The variable holding the port a process serves /healthz, /readyz and /metrics on: its one *_PORT. */
export function portVariable(name: string): string {
  const ports = Object.keys(info(name).spec).filter((k) => k.endsWith('_PORT'));
  if (ports.length !== 1) throw new Error(`${name}: expected one *_PORT variable in its env spec, found ${ports.join(', ')}`);
  return ports[0] as string;
}

export const entryPoint = (name: string) => `services/${name}/dist/index.js`;
export const TEST_TOKEN = 'deploy-artifacts-test-token-0123456789';

/** What the process's loadEnv makes of these variables (throws naming a bad one). */
export function loadFor(name: string, source: Record<string, string>): EnvRecord {
  return info(name).load(source);
}

export function numberOf(env: EnvRecord, key: string): number {
  const value = env[key];
  if (typeof value !== 'number') throw new Error(`${key} is not a number: ${String(value)}`);
  return value;
}

export function read(file: string): string {
  return readFileSync(path.join(ROOT, file), 'utf8');
}

export const isFile = (p: string) => existsSync(p) && statSync(p).isFile();
export const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

/** Seconds of a Go-style duration as compose and Prometheus write them: 30s, 1m30s, 1.5s, 500ms. */
export function seconds(duration: string): number {
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
  return value.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (whole, braced: string | undefined, op: string | undefined, arg: string | undefined, bare: string | undefined) => {
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
    },
  );
}

function interpolateAll(node: unknown, vars: Readonly<Record<string, string | undefined>>, where: string): unknown {
  if (typeof node === 'string') return interpolate(node, vars, where);
  if (Array.isArray(node)) return node.map((n, i) => interpolateAll(n, vars, `${where}[${i}]`));
  if (node !== null && typeof node === 'object')
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, interpolateAll(v, vars, `${where}.${k}`)]));
  return node;
}

export interface ComposeService {
  image?: string;
  build?: { context?: string; dockerfile?: string } | string;
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: (string | { target: number; published?: number | string })[];
  volumes?: (string | { type?: string; source?: string; target: string })[];
  tmpfs?: string[] | string;
  healthcheck?: { test?: string[] | string };
  deploy?: { replicas?: number };
  stop_grace_period?: string;
  depends_on?: Record<string, { condition?: string }> | string[];
  user?: string;
  read_only?: boolean;
  cap_drop?: string[];
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

export const TEST_REDIS_PASSWORD = 'deploy-artifacts-redis-password-0123456789';
export const COMPOSE_VARS = {
  ADMIN_TOKEN: TEST_TOKEN,
  REDIS_PASSWORD: TEST_REDIS_PASSWORD,
  GRAFANA_ADMIN_PASSWORD: 'grafana-test-password',
};

/**
 * An image reference that always names the same build: a tag with a full version (x.y.z, with
 * an optional variant such as -bookworm-slim) or a digest. `latest`, no tag, and floating majors
 * or minors (`redis:7`, `node:22-bookworm-slim`) are not.
 */
export function isExactImage(image: string): boolean {
  if (/@sha256:[0-9a-f]{64}$/.test(image)) return true;
  const tag = /:([^/:]+)$/.exec(image)?.[1];
  return tag !== undefined && /^v?\d+\.\d+\.\d+([-.][A-Za-z0-9.-]+)?$/.test(tag);
}

/**
 * The compose files as `docker compose -f <file> -f <file> …` reads them: each parsed and
 * interpolated, then merged in order (mergeCompose).
 */
export function loadCompose(
  vars: Readonly<Record<string, string | undefined>> = COMPOSE_VARS,
  files: readonly string[] = ['docker-compose.yml'],
): ComposeFile {
  // YAML 1.1 merge keys (<<: *anchor), as compose reads them.
  const models = files.map((file) => interpolateAll(parse(read(file), { merge: true }), vars, file) as ComposeFile);
  return models.reduce((merged, next) => mergeCompose(merged, next));
}

type Yaml = null | boolean | number | string | Yaml[] | { [key: string]: Yaml };
const isMap = (v: Yaml | undefined): v is { [key: string]: Yaml } => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A service's environment or depends_on as a map, whichever of the two forms it is written in. */
function asMap(key: string, value: Yaml): { [key: string]: Yaml } {
  if (!Array.isArray(value)) return isMap(value) ? value : {};
  const text = (entry: Yaml) => (typeof entry === 'string' ? entry : JSON.stringify(entry));
  if (key === 'depends_on') return Object.fromEntries(value.map((name) => [text(name), { condition: 'service_started' }]));
  return Object.fromEntries(
    value.map((entry) => {
      const line = text(entry);
      const eq = line.indexOf('=');
      return eq === -1 ? [line, null] : [line.slice(0, eq), line.slice(eq + 1)];
    }),
  );
}

/** What makes a port or volume entry the same one (compose's unique keys: ports by ip, target, published and protocol; volumes by target). */
function uniqueKey(key: string, entry: Yaml): string {
  if (key === 'volumes' && typeof entry === 'string') return entry.split(':')[1] ?? entry;
  if (key === 'volumes' && isMap(entry)) return JSON.stringify(entry['target']);
  return JSON.stringify(entry);
}

/**
 * Compose's merge of one file over the ones before it (the Compose Specification, "Merge"): maps
 * merge key by key, sequences are appended, except command, entrypoint and healthcheck.test (the
 * later one replaces) and ports and volumes (an entry replaces the one with the same unique key);
 * environment and depends_on merge as maps whichever form they are written in.
 */
function mergeCompose(base: ComposeFile, override: ComposeFile): ComposeFile {
  // `at`: the keys from the top down to this value; at[2] is a service's attribute.
  const merge = (a: Yaml | undefined, b: Yaml, at: readonly string[]): Yaml => {
    const attribute = at[0] === 'services' && at.length === 3 ? at[2] : undefined;
    const healthTest = at[0] === 'services' && at.length === 4 && at[2] === 'healthcheck' && at[3] === 'test';
    if (attribute === 'command' || attribute === 'entrypoint' || healthTest || a === undefined) return b;
    if ((attribute === 'environment' || attribute === 'depends_on') && a !== null)
      return merge(asMap(attribute, a), asMap(attribute, b), [...at, '']);
    if ((attribute === 'ports' || attribute === 'volumes') && Array.isArray(a) && Array.isArray(b)) {
      const out = [...a];
      for (const entry of b) {
        const same = out.findIndex((e) => uniqueKey(attribute, e) === uniqueKey(attribute, entry));
        if (same === -1) out.push(entry);
        else out[same] = entry;
      }
      return out;
    }
    if (Array.isArray(a) && Array.isArray(b)) return [...a, ...b];
    if (isMap(a) && isMap(b)) {
      const out = { ...a };
      for (const [k, v] of Object.entries(b)) out[k] = merge(a[k], v, [...at, k]);
      return out;
    }
    return b;
  };
  return merge(base as unknown as Yaml, override as unknown as Yaml, []) as unknown as ComposeFile;
}

/**
 * The config lines a `sh -c` script gives redis-server on stdin: the script must end with
 * `exec redis-server "$@" - <<EOF`, the lines, `EOF` (a here-document: the password is in no
 * command line; exec without a pipe: redis-server is the container's PID 1 and gets SIGTERM, which
 * a shell as PID 1 would ignore). The lines come back unexpanded ($REDIS_PASSWORD, not its value).
 */
export function stdinConfig(script: string): string[] {
  const lines = script.trimEnd().split('\n');
  const at = lines.findIndex((line) => line === 'exec redis-server "$@" - <<EOF');
  if (at === -1) throw new Error(`the script does not end with exec redis-server "$@" - <<EOF … EOF:\n${script}`);
  if (/[|\\]\s*$/.test(lines[at - 1] ?? '')) throw new Error(`redis-server is fed through a pipe (it would not be PID 1):\n${script}`);
  if (lines[lines.length - 1] !== 'EOF' || lines.slice(at + 1, -1).includes('EOF'))
    throw new Error(`the here-document does not end the script:\n${script}`);
  return lines.slice(at + 1, -1);
}

export function composeEnv(service: ComposeService, where: string): Record<string, string> {
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
    if (typeof value === 'boolean' || value === null)
      throw new Error(`${where}: environment ${key} must be a string or a number, got ${String(value)}`);
    env[key] = String(value);
  }
  return env;
}

/** [host path, container path] of the bind mounts of a service. */
export function bindMounts(service: ComposeService): [string, string][] {
  const out: [string, string][] = [];
  for (const v of service.volumes ?? []) {
    if (typeof v === 'string') {
      const [source, target] = v.split(':');
      if (source !== undefined && target !== undefined && (source.startsWith('.') || source.startsWith('/'))) out.push([source, target]);
    } else if (v.type === 'bind' && v.source !== undefined) out.push([v.source, v.target]);
  }
  return out;
}

export function namedVolumes(service: ComposeService): string[] {
  return (service.volumes ?? []).flatMap((v) => {
    const source = typeof v === 'string' ? v.split(':')[0] : v.type === 'volume' ? v.source : undefined;
    return source !== undefined && !source.startsWith('.') && !source.startsWith('/') ? [source] : [];
  });
}

/** The repository file that a path inside the container comes from, through the service's bind mounts. */
export function hostPathOf(service: ComposeService, containerPath: string): string | undefined {
  for (const [source, target] of bindMounts(service)) {
    if (containerPath === target) return path.resolve(ROOT, source);
    if (containerPath.startsWith(`${target}/`)) return path.resolve(ROOT, source, containerPath.slice(target.length + 1));
  }
  return undefined;
}

/** [published, container] port pairs of a service. */
export function publishedPorts(service: ComposeService): [number | undefined, number][] {
  return (service.ports ?? []).map((p) => {
    if (typeof p !== 'string') return [p.published === undefined ? undefined : Number(p.published), p.target];
    const parts = p.replace(/\/(tcp|udp)$/, '').split(':');
    const container = Number(parts[parts.length - 1]);
    return [parts.length > 1 ? Number(parts[parts.length - 2]) : undefined, container];
  });
}

/** The URL a compose healthcheck fetches. */
export function healthcheckUrl(service: ComposeService): URL {
  const test = service.healthcheck?.test;
  const text = Array.isArray(test) ? test.join(' ') : (test ?? '');
  const m = /https?:\/\/[^\s'"`)]+/.exec(text);
  if (!m) throw new Error(`no URL in healthcheck ${text}`);
  return new URL(m[0]);
}

/**
 * A compose override that needs the Redis password: none of its variables has a secret-looking
 * default, every secret-looking variable it sets is the password given, and neither it alone nor
 * with the base loads without REDIS_PASSWORD.
 */
export function expectOverrideNeedsPassword(override: string): void {
  const raw = read(override);
  const defaults = [...raw.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:?-)[^}]*\}/g)].map((m) => m[1] as string);
  expect(defaults.filter((name) => /PASSWORD|TOKEN|SECRET|KEY|AUTH/i.test(name))).toEqual([]);
  for (const [name, s] of Object.entries(loadCompose(COMPOSE_VARS, [override]).services))
    for (const [key, value] of Object.entries(composeEnv(s, name)))
      if (/PASSWORD|TOKEN|SECRET|AUTH/i.test(key))
        expect({ service: name, key, value }).toEqual({ service: name, key, value: TEST_REDIS_PASSWORD });
  for (const value of [undefined, '']) {
    expect(() => loadCompose({ ...COMPOSE_VARS, REDIS_PASSWORD: value }, ['docker-compose.yml', override])).toThrow(/REDIS_PASSWORD/);
    // The override alone requires it too: no service of its own falls back to anything.
    expect(() => loadCompose({ ...COMPOSE_VARS, REDIS_PASSWORD: value }, [override])).toThrow(/REDIS_PASSWORD/);
  }
}

/** host:port pairs of a REDIS_CLUSTER_NODES value, whether raw or as a process's loadEnv parsed it. */
export function clusterSeeds(value: unknown): string[] {
  if (typeof value === 'string') return value.split(',');
  if (Array.isArray(value))
    return value.map((v: unknown) => {
      if (typeof v === 'string') return v;
      const { host, port } = v as { host: string; port: number };
      return `${host}:${port}`;
    });
  throw new Error(`REDIS_CLUSTER_NODES: unexpected value ${JSON.stringify(value)}`);
}
