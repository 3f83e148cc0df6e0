/**
 * docker-compose.yml (with compose's variable interpolation) and ops/prometheus/prometheus.yml
 * held against the processes they run: entry points, variables each process reads and loads,
 * ports, health checks, Redis persistence, mounts, scrape jobs.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { redisBytes } from './k8s-objects';
import { REPO_ROOT as ROOT, opsQueries, promqlSelectors } from './promql-names';
import {
  NAMES,
  info,
  portVariable,
  entryPoint,
  loadFor,
  numberOf,
  read,
  isFile,
  isDir,
  seconds,
  ComposeService,
  loadCompose,
  composeEnv,
  bindMounts,
  namedVolumes,
  hostPathOf,
  publishedPorts,
  healthcheckUrl,
  isExactImage,
  COMPOSE_VARS,
  TEST_REDIS_PASSWORD,
  stdinConfig,
} from './deployment';

/**
 * The redis-server arguments of the redis service, whether it runs redis-server or
 * `sh -c '<script ending in exec redis-server "$@" …>' redis-server <args>`.
 */
function redisServerArgs(service: ComposeService): string[] {
  const command = Array.isArray(service.command) ? service.command : (service.command ?? '').split(/\s+/);
  if (command[0] === 'redis-server') return command;
  return command[0] === 'sh' && command[1] === '-c' ? command.slice(3) : [];
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

  it.each(['ADMIN_TOKEN', 'REDIS_PASSWORD', 'GRAFANA_ADMIN_PASSWORD'])('refuses to start without %s', (name) => {
    expect(() => loadCompose({ ...COMPOSE_VARS, [name]: undefined })).toThrow(new RegExp(name));
    expect(() => loadCompose({ ...COMPOSE_VARS, [name]: '' })).toThrow(new RegExp(name));
  });

  it('has no default secret: no variable named like a password, token, secret or key falls back to a value', () => {
    const raw = read('docker-compose.yml');
    const defaults = [...raw.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:?-)[^}]*\}/g)].map((m) => m[1] as string);
    expect(defaults.filter((name) => /PASSWORD|TOKEN|SECRET|KEY|AUTH/i.test(name))).toEqual([]);
    // Nor a literal one: every secret-looking setting takes its value from a variable that must be set.
    for (const [name, service] of Object.entries(compose.services))
      for (const [key, value] of Object.entries(composeEnv(service, name)))
        if (/PASSWORD|TOKEN|SECRET|AUTH/i.test(key))
          expect({ service: name, key, weak: /^(admin|password|changeme|secret)?$/i.test(value) }).toEqual({
            service: name,
            key,
            weak: false,
          });
    expect(envOf('grafana')['GF_SECURITY_ADMIN_PASSWORD']).toBe(COMPOSE_VARS.GRAFANA_ADMIN_PASSWORD);
  });

  it('runs Redis with the password it is given, in no command line, and every process passes it in REDIS_URL', () => {
    const redis = compose.services['redis'] as ComposeService;
    const args = redisServerArgs(redis);
    expect(args[0]).toBe('redis-server');
    // Config from stdin ("-"), a here-document where the shell writes requirepass from the
    // environment; exec'd without a pipe, so redis-server is PID 1 and docker stop's SIGTERM reaches it.
    expect(stdinConfig((redis.command as string[])[2] as string)).toEqual(['requirepass $REDIS_PASSWORD']);
    expect(JSON.stringify(redis.command)).not.toContain(TEST_REDIS_PASSWORD);
    expect(composeEnv(redis, 'redis')['REDIS_PASSWORD']).toBe(TEST_REDIS_PASSWORD);
    // The health check authenticates (redis-cli reads REDISCLI_AUTH) and accepts only PONG.
    expect(composeEnv(redis, 'redis')['REDISCLI_AUTH']).toBe(TEST_REDIS_PASSWORD);
    expect(JSON.stringify(redis.healthcheck?.test)).toMatch(/redis-cli ping \| grep -qx PONG/);
    for (const name of NAMES) {
      const url = new URL(loadFor(name, envOf(name))['REDIS_URL'] as string);
      expect({ service: name, password: decodeURIComponent(url.password) }).toEqual({ service: name, password: TEST_REDIS_PASSWORD });
    }
  });

  it('publishes no Redis port, and the admin API, Prometheus and Grafana on the loopback interface only', () => {
    expect(compose.services['redis']?.ports ?? []).toEqual([]);
    for (const [name, service] of Object.entries(compose.services))
      expect({ service: name, redis: publishedPorts(service).some(([, target]) => target === 6379) }).toEqual({
        service: name,
        redis: false,
      });
    for (const name of ['admin', 'prometheus', 'grafana'])
      for (const p of compose.services[name]?.ports ?? [])
        expect({ service: name, port: p }).toEqual({ service: name, port: expect.stringMatching(/^127\.0\.0\.1:/) });
  });

  it('loads no config file (no demo source, no public write key) unless the operator adds one', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      expect({ service: name, config: composeEnv(service, name)['EVENTRELAY_CONFIG'] }).toEqual({ service: name, config: undefined });
      expect(bindMounts(service).filter(([source]) => source.includes('examples'))).toEqual([]);
    }
    expect(read('docker-compose.yml')).not.toContain('demo-write-key');
  });

  it('names every image by an exact version, except the eventrelay image it builds', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      if (service.build) continue;
      expect({ service: name, image: service.image, exact: isExactImage(service.image ?? '') }).toEqual({
        service: name,
        image: service.image,
        exact: true,
      });
    }
  });

  it('does not enable Prometheus’s lifecycle API (reload and quit over HTTP)', () => {
    const prometheus = compose.services['prometheus'] as ComposeService;
    expect(JSON.stringify(prometheus.command)).not.toMatch(/enable-lifecycle|enable-admin-api/);
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
      expect({ service: name, path: url.pathname, port: Number(url.port) }).toEqual({
        service: name,
        path: '/healthz',
        port: numberOf(env, portVariable(name)),
      });
    }
    expect(publishedPorts(compose.services['ingest'] as ComposeService)).toEqual([
      [8080, numberOf(loadFor('ingest', envOf('ingest')), 'INGEST_PORT')],
    ]);
    expect(publishedPorts(compose.services['admin'] as ComposeService)).toEqual([
      [8081, numberOf(loadFor('admin', envOf('admin')), 'ADMIN_PORT')],
    ]);
    // The workers publish nothing (webhook-delivery runs two replicas: a fixed host port would collide).
    for (const name of ['router', 'webhook-delivery', 'audiences'])
      expect(publishedPorts(compose.services[name] as ComposeService)).toEqual([]);
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

  it('runs Redis with AOF fsynced every second, noeviction and a maxmemory, on a volume', () => {
    const redis = compose.services['redis'] as ComposeService;
    const args = redisServerArgs(redis);
    const setting = (key: string) => args[args.indexOf(`--${key}`) + 1];
    expect(args[0]).toBe('redis-server');
    expect(setting('appendonly')).toBe('yes');
    expect(setting('appendfsync')).toBe('everysec');
    expect(setting('maxmemory-policy')).toBe('noeviction');
    // Without a bound Redis grows until the host runs out (issue 32); REDIS_MAXMEMORY overrides it.
    expect(redisBytes(setting('maxmemory') ?? '')).toBe(768 * 1024 * 1024);
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
      for (const [source] of bindMounts(service))
        expect({ service: name, source, exists: existsSync(path.resolve(ROOT, source)) }).toEqual({ service: name, source, exists: true });
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
    const providers = parse(readFileSync(path.join(provisioning, 'dashboards/eventrelay.yml'), 'utf8')) as {
      providers: { type: string; options: { path: string } }[];
    };
    const dashboardsDir = providers.providers[0]?.options.path as string;
    expect(hostPathOf(grafana, `${dashboardsDir}/eventrelay.json`)).toBe(path.join(ROOT, 'ops/grafana/eventrelay.json'));
    const datasources = parse(readFileSync(path.join(provisioning, 'datasources/prometheus.yml'), 'utf8')) as {
      datasources: { type: string; url: string }[];
    };
    const ds = datasources.datasources[0];
    expect(ds?.type).toBe('prometheus');
    const dsUrl = new URL(ds?.url as string);
    expect(Object.keys(compose.services)).toContain(dsUrl.hostname);
    // Prometheus listens on its default 9090 unless told otherwise.
    const listen =
      flags
        .find((f) => f.startsWith('--web.listen-address='))
        ?.split(':')
        .pop() ?? '9090';
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
  const config = parse(read('ops/prometheus/prometheus.yml')) as {
    global?: { scrape_interval?: string };
    rule_files?: string[];
    scrape_configs: ScrapeConfig[];
  };
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
    const datasources = parse(read('ops/grafana/provisioning/datasources/prometheus.yml')) as {
      datasources: { jsonData?: { timeInterval?: string } }[];
    };
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
          if (m.op === '=')
            expect({ where: q.where, job: m.value, defined: jobs.includes(m.value) }).toEqual({
              where: q.where,
              job: m.value,
              defined: true,
            });
          if (m.op === '=~') {
            const re = new RegExp(`^(?:${m.value})$`);
            // job=~"eventrelay-.*" must take in every process and nothing else.
            expect({ where: q.where, matched: jobs.filter((j) => re.test(j)).sort() }).toEqual({
              where: q.where,
              matched: eventrelayJobs.sort(),
            });
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(0);
  });
});
