/**
 * A small typed env toolkit: each service declares its variables once, `loadEnv` parses every one,
 * reports all bad values together (each message names its variable), and returns a frozen object.
 * `process.env` is passed in by the composition root and read nowhere else.
 */
import { readFileSync, statSync } from 'node:fs';
import { ConfigError } from './errors.js';
import { parseShardList } from './shards.js';

export type EnvSource = Readonly<Record<string, string | undefined>>;

/** What the reference tables (docs/reference/env.md, `pnpm gen:docs`) say of a variable besides its description. */
interface EnvDoc {
  /** The values it takes, e.g. "integer 1 to 1,000". */
  readonly type: string;
  /** What an unset or blank variable means, as it would be written in the environment. */
  readonly default?: string;
  /** The process refuses to start without it. */
  readonly required: boolean;
}

export interface EnvVar<T> {
  /** One line, the variable's description in the reference tables. */
  readonly describe: string;
  readonly doc: EnvDoc;
  readonly secret?: boolean;
  parse(raw: string | undefined, name: string): T;
}

type Spec = Record<string, EnvVar<unknown>>;
export type EnvOf<S extends Spec> = { readonly [K in keyof S]: S[K] extends EnvVar<infer T> ? T : never };

class EnvValueError extends Error {}
const bad = (name: string, why: string): never => {
  throw new EnvValueError(`${name} ${why}`);
};
const blank = (raw: string | undefined): raw is undefined => raw === undefined || raw.trim() === '';
/** 1000000 → "1,000,000", the same on every machine (no locale). */
const grouped = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

export function integer(opts: { default: number; min: number; max: number; describe: string }): EnvVar<number> {
  return {
    describe: opts.describe,
    doc: { type: `integer, ${grouped(opts.min)} to ${grouped(opts.max)}`, default: String(opts.default), required: false },
    parse(raw, name) {
      if (blank(raw)) return opts.default;
      const text = raw.trim();
      if (!/^-?\d+$/.test(text)) return bad(name, `must be a whole number, got "${raw}"`);
      const n = Number(text);
      if (n < opts.min || n > opts.max) return bad(name, `must be between ${opts.min} and ${opts.max}, got ${n}`);
      return n;
    },
  };
}

export function port(opts: { default: number; describe: string }): EnvVar<number> {
  const inner = integer({ ...opts, min: 0, max: 65535 });
  return { ...inner, doc: { ...inner.doc, type: 'port, 0 to 65535 (0 picks a free one)' } };
}

interface TextOptions {
  default?: string;
  pattern?: RegExp;
  hint?: string;
  secret?: boolean;
  describe: string;
  /** What the reference tables call its values, when the hint or pattern does not say it (e.g. "file path"). */
  type?: string;
}

export function text(opts: TextOptions & { default: string }): EnvVar<string>;
export function text(opts: TextOptions): EnvVar<string | undefined>;
export function text(opts: TextOptions): EnvVar<string | undefined> {
  return {
    describe: opts.describe,
    doc: {
      type: opts.type ?? opts.hint ?? (opts.pattern ? `text of the form ${opts.pattern}` : 'text'),
      default: opts.default,
      required: false,
    },
    secret: opts.secret,
    parse(raw, name) {
      if (blank(raw)) return opts.default;
      // A secret's value is never echoed: start-up errors end up in log collectors.
      if (opts.pattern && !opts.pattern.test(raw))
        return bad(name, `must be ${opts.hint ?? `of the form ${opts.pattern}`}${opts.secret ? '' : `, got "${raw}"`}`);
      return raw;
    },
  };
}

export function required<T>(inner: EnvVar<T | undefined>): EnvVar<T> {
  return {
    ...inner,
    // With a default it cannot be missing: only a variable without one must be set.
    doc: { ...inner.doc, required: inner.doc.default === undefined },
    parse(raw, name) {
      const value = inner.parse(raw, name);
      return value === undefined ? bad(name, 'is required') : value;
    },
  };
}

export function oneOf<const T extends string>(values: readonly T[], opts: { default: T; describe: string }): EnvVar<T> {
  return {
    describe: opts.describe,
    doc: { type: `one of ${values.join(', ')}`, default: opts.default, required: false },
    parse(raw, name) {
      if (blank(raw)) return opts.default;
      const v = raw.trim() as T;
      return values.includes(v) ? v : bad(name, `must be one of ${values.join(', ')}, got "${raw}"`);
    },
  };
}

function redisUrl(opts: { default: string; describe: string }): EnvVar<string> {
  return {
    describe: opts.describe,
    doc: { type: 'redis:// or rediss:// URL (redis://[[user]:password@]host[:port][/db])', default: opts.default, required: false },
    secret: true,
    parse(raw, name) {
      const value = blank(raw) ? opts.default : raw.trim();
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        // Not echoed: the value may hold a password.
        return bad(name, 'must be a redis:// or rediss:// URL (redis://[[user]:password@]host[:port][/db])');
      }
      if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
        return bad(name, `must use redis:// or rediss://, got "${url.protocol}"`);
      return value;
    },
  };
}

/**
 * A path to a PEM file of certificates, checked at parse time (it exists, is readable and holds at
 * least one certificate) so a bad path stops the process at start with the variable named.
 */
function pemFile(opts: { describe: string }): EnvVar<string | undefined> {
  return {
    describe: opts.describe,
    doc: { type: 'file path (PEM)', required: false },
    parse(raw, name) {
      if (blank(raw)) return undefined;
      const path = raw.trim();
      let pem: string;
      try {
        if (!statSync(path).isFile()) return bad(name, `must name a file, got the directory "${path}"`);
        pem = readFileSync(path, 'utf8');
      } catch (err) {
        if (err instanceof EnvValueError) throw err;
        return bad(name, `cannot read "${path}": ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      if (!/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.test(pem)) return bad(name, `"${path}" holds no PEM certificate`);
      return path;
    },
  };
}

/** The name Sentinels monitor eventrelay's Redis primary under, unless REDIS_SENTINEL_NAME says otherwise. */
export const DEFAULT_SENTINEL_NAME = 'eventrelay';

/** One Redis Sentinel to ask where the primary is. */
export interface SentinelAddress {
  readonly host: string;
  readonly port: number;
}

/** `host:port` pairs separated by commas (IPv6 in brackets), for REDIS_SENTINELS and REDIS_CLUSTER_NODES. */
function hostPortList(opts: { describe: string }): EnvVar<readonly SentinelAddress[] | undefined> {
  return {
    describe: opts.describe,
    doc: { type: 'host:port pairs separated by commas ([::1]:26379 for IPv6)', required: false },
    parse(raw, name) {
      if (blank(raw)) return undefined;
      const addresses: SentinelAddress[] = [];
      for (const item of raw.split(',').map((a) => a.trim())) {
        const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$/.exec(item);
        const port = match ? Number(match[2]) : NaN;
        if (!match || port < 1 || port > 65535) return bad(name, `must be host:port pairs separated by commas, got "${item}" in "${raw}"`);
        addresses.push({ host: (match[1] as string).replace(/^\[(.*)\]$/, '$1'), port });
      }
      return Object.freeze(addresses);
    },
  };
}

/** What is wrong between the common variables, each problem naming them. */
function commonProblems(env: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const cluster = env['REDIS_CLUSTER_NODES'] as readonly SentinelAddress[] | undefined;
  if (cluster && env['REDIS_SENTINELS'])
    problems.push('REDIS_CLUSTER_NODES and REDIS_SENTINELS cannot both be set: a Redis Cluster fails over on its own');
  if (cluster && !/\{[^}]+\}/.test(String(env['EVENTRELAY_PREFIX'])))
    problems.push(
      `EVENTRELAY_PREFIX must hold a {hash tag} on a Redis Cluster (REDIS_CLUSTER_NODES), such as {eventrelay}, got "${String(env['EVENTRELAY_PREFIX'])}"`,
    );
  if (cluster && !/^rediss?:\/\/[^/]*\/?0?$/.test(String(env['REDIS_URL']).replace(/\?.*$/, '')))
    problems.push('REDIS_URL must name no database but 0 on a Redis Cluster (REDIS_CLUSTER_NODES): a cluster has only database 0');
  const shards = env['EVENTRELAY_SHARDS'];
  const consumed = env['EVENTRELAY_CONSUME_SHARDS'];
  if (typeof shards === 'number' && typeof consumed === 'string') {
    const parsed = parseShardList(consumed, shards);
    if (typeof parsed === 'string') problems.push(`EVENTRELAY_CONSUME_SHARDS ${parsed}`);
  }
  return problems;
}

/** What a custom parser returns for a bad value: the reason, without the variable's name. */
export class EnvProblem {
  constructor(readonly why: string) {}
}

/**
 * A variable with its own parser, for values the helpers above do not cover. `type`, `default` and
 * `required` only describe what `parse` does, for the reference tables.
 */
export function custom<T>(opts: {
  describe: string;
  type: string;
  default?: string;
  required?: boolean;
  secret?: boolean;
  parse: (raw: string | undefined) => T | EnvProblem;
}): EnvVar<T> {
  return {
    describe: opts.describe,
    doc: { type: opts.type, default: opts.default, required: opts.required ?? false },
    secret: opts.secret,
    parse(raw, name) {
      const value = opts.parse(raw);
      return value instanceof EnvProblem ? bad(name, value.why) : value;
    },
  };
}

/** Parses every variable of `spec`; throws one ConfigError naming each bad variable. */
export function loadEnvFrom<S extends Spec>(spec: S, source: EnvSource): EnvOf<S> {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, variable] of Object.entries(spec)) {
    try {
      out[name] = variable.parse(source[name], name);
    } catch (err) {
      if (!(err instanceof EnvValueError)) throw err;
      problems.push(err.message);
    }
  }
  if (problems.length === 0 && 'REDIS_URL' in spec) problems.push(...commonProblems(out));
  if (problems.length > 0) throw new ConfigError('invalid_env', `invalid environment: ${problems.join('; ')}`);
  return Object.freeze(out) as EnvOf<S>;
}

/** The effective config for the start-up log line, secrets masked. */
export function describeEnv<S extends Spec>(spec: S, env: EnvOf<S>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(spec)) {
    const value = (env as Record<string, unknown>)[name];
    out[name] = variable.secret && typeof value === 'string' ? redact(name, value) : value;
  }
  return out;
}

function redact(name: string, value: string): string {
  if (name.endsWith('_URL')) {
    try {
      const url = new URL(value);
      if (url.password) url.password = '***';
      // ioredis also takes the password from the query string.
      for (const key of [...url.searchParams.keys()]) if (/pass/i.test(key)) url.searchParams.set(key, '***');
      return url.toString();
    } catch {
      return '***';
    }
  }
  return '***';
}

/** The variables every process reads (docs/spec.md §1). */
export const commonEnv = {
  REDIS_URL: redisUrl({
    default: 'redis://127.0.0.1:6379',
    describe:
      'the Redis (6.2 or newer) that holds the queues, the config and the dedupe state; an ACL user and password go in the URL (redis://user:password@host:6379), rediss:// for TLS. A refused password stops the process at start',
  }),
  EVENTRELAY_PREFIX: required(
    text({
      default: 'eventrelay',
      pattern: /^[A-Za-z0-9_{}.-]{1,64}$/,
      hint: 'letters, digits, _ . - and a {hash tag}, without ":" (1 to 64 characters)',
      describe:
        'prefix of every Redis key and queue, the same for every process; a hash tag such as {eventrelay} on Redis Cluster. Changing it later strands what is already in Redis',
    }),
  ),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, {
    default: 'info',
    describe: 'level of the JSON log lines on stdout (pino); silent writes none',
  }),
  REDIS_TLS_CA_FILE: pemFile({
    describe:
      'PEM file of the CA (or CAs) that signed the certificate of a rediss:// REDIS_URL, for a private CA; read once at start, the process refuses to start when it is missing, unreadable or holds no certificate',
  }),
  REDIS_SENTINELS: hostPortList({
    describe:
      'Redis Sentinels to ask for the current primary (a primary with replicas and automatic failover): every connection follows a failover on its own. REDIS_URL then gives only the credentials, the database and redis:// or rediss://; its host and port are not used',
  }),
  REDIS_SENTINEL_NAME: text({
    default: DEFAULT_SENTINEL_NAME,
    pattern: /^[A-Za-z0-9_.-]{1,64}$/,
    hint: 'letters, digits, _ . - (1 to 64 characters)',
    describe: 'the name under which the Sentinels of REDIS_SENTINELS monitor the primary (sentinel monitor <name> …)',
  }),
  REDIS_SENTINEL_PASSWORD: text({
    secret: true,
    describe: "password of the Sentinels themselves (their requirepass), when they ask for one; the primary's is in REDIS_URL",
  }),
  REDIS_CLUSTER_NODES: hostPortList({
    describe:
      'nodes of a Redis Cluster (any few of them: the rest are found): every connection is a cluster client that follows the slot map, redirections and failovers. REDIS_URL then gives only the credentials and redis:// or rediss://; EVENTRELAY_PREFIX must hold a {hash tag}. Not with REDIS_SENTINELS',
  }),
  EVENTRELAY_SHARDS: integer({
    default: 1,
    min: 1,
    max: 256,
    describe:
      'how many shards the route, deliver and profile queues (and their keys) are split into, each in a Redis Cluster slot of its own; the same for every process. 1 on a single Redis; a multiple of the primaries on a cluster (12 suits 1 to 12 primaries). Changing it means draining the queues first (docs/deployment.md, "Redis Cluster")',
  }),
  EVENTRELAY_CONSUME_SHARDS: text({
    default: 'all',
    pattern: /^\s*(all|\d+(-\d+)?(\s*,\s*\d+(-\d+)?)*)\s*$/,
    hint: 'all, or shard numbers and ranges such as 0,2,4-7',
    describe:
      "which shards this process's workers take jobs from; replicas can split the shards between them, as long as every shard is taken by one. Concurrency settings count per shard",
  }),
  EVENTRELAY_CONFIG: text({
    type: 'file path',
    describe:
      'declarative config file (sources, destinations, audiences) applied at start as an idempotent upsert; checked whole before anything is written',
  }),
  EVENTRELAY_CONFIG_MODE: oneOf(['seed', 'sync'] as const, {
    default: 'seed',
    describe:
      'how EVENTRELAY_CONFIG is applied at start: seed only when nothing was ever written to this prefix, so changes made through the admin API survive a restart; sync at every start, the file winning for every source, destination and audience it names. Each change the file makes is in the audit log under config-file',
  }),
} as const;
