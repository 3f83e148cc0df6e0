/**
 * Every k8s/ manifest as the base and the prod overlay render it (test/support/kustomize.ts), held
 * against the processes: entry points, variables, probes and ports, resources, disruption budgets,
 * autoscaling, Redis persistence, grace periods, the ServiceMonitor, and what the overlay changes.
 */
import path from 'node:path';
import { parse } from 'yaml';
import { renderKustomization, type Manifest } from '../support/kustomize';
import { REPO_ROOT as ROOT } from './promql-names';
import {
  Container,
  Workload,
  Service,
  NetworkPolicy,
  CLUSTER_SCOPED,
  matchesLabels,
  selects,
  bytes,
  redisBytes,
  expandK8s,
  splitImage,
  Rendered,
  resolvePort,
  TEST_SECRETS,
} from './k8s-objects';
import {
  NAMES,
  info,
  portVariable,
  entryPoint,
  loadFor,
  numberOf,
  read,
  isFile,
  ComposeService,
  loadCompose,
  composeEnv,
  isExactImage,
  stdinConfig,
} from './deployment';

/** The redis-server argv of the Redis container, whether it runs redis-server or `sh -c '… exec redis-server "$@" -' redis-server <args>`. */
function redisArgv(c: Container, env: Record<string, string>): string[] {
  const argv = [...(c.command ?? []), ...(c.args ?? [])].map((a) => expandK8s(a, env));
  return argv[0] === 'sh' && argv[1] === '-c' ? argv.slice(3) : argv;
}

const RENDERS: [string, string][] = [
  ['k8s/base', 'k8s/base'],
  ['k8s/overlays/prod', 'k8s/overlays/prod'],
  // Redis as a primary, two replicas and Sentinels: what differs is checked in k8s-durable.test.ts.
  ['k8s/overlays/durable', 'k8s/overlays/durable'],
];

describe.each(RENDERS)('%s rendered', (_label, dir) => {
  const r = new Rendered(renderKustomization(path.join(ROOT, dir)));
  const durable = dir === 'k8s/overlays/durable';
  /** The first pod of the Redis StatefulSet, for its containers' fieldRef variables. */
  const redisPod = { name: 'eventrelay-redis-0', namespace: 'eventrelay' };

  it('has one Deployment and one Service per process, each selecting its own pods', () => {
    expect(
      r
        .all('Deployment')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(NAMES.map((n) => `eventrelay-${n}`).sort());
    for (const name of NAMES) {
      const d = r.deployment(name);
      expect(matchesLabels(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true);
      const svc = r.one<Service>('Service', `eventrelay-${name}`);
      expect(matchesLabels(svc.spec.selector, d.spec.template.metadata.labels)).toBe(true);
      // and no other process's pods
      for (const other of NAMES.filter((n) => n !== name))
        expect(matchesLabels(svc.spec.selector, r.deployment(other).spec.template.metadata.labels)).toBe(false);
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
    for (const cm of r.all<Manifest & { data?: Record<string, string> }>('ConfigMap'))
      expect(Object.keys(cm.data ?? {})).not.toContain('ADMIN_TOKEN');
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

  it('takes REDIS_URL from the Secret eventrelay-redis (no ConfigMap holds it), and Redis its password from the same Secret, in no command line', () => {
    for (const name of NAMES) {
      const url = (r.container(name).env ?? []).filter((e) => e.name === 'REDIS_URL');
      expect({ process: name, url }).toEqual({
        process: name,
        url: [{ name: 'REDIS_URL', valueFrom: { secretKeyRef: { name: 'eventrelay-redis', key: 'url' } } }],
      });
    }
    for (const cm of r.all<Manifest & { data?: Record<string, string> }>('ConfigMap'))
      expect(Object.keys(cm.data ?? {}).filter((k) => /REDIS_URL|PASSWORD/.test(k))).toEqual([]);
    const redis = r.one<Workload>('StatefulSet', 'eventrelay-redis');
    const c = redis.spec.template.spec.containers.find((x) => splitImage(x.image).name === 'redis') as Container;
    const fromSecret = (variable: string) => (c.env ?? []).find((e) => e.name === variable)?.valueFrom?.secretKeyRef;
    expect(fromSecret('REDIS_PASSWORD')).toEqual({ name: 'eventrelay-redis', key: 'password' });
    expect(fromSecret('REDISCLI_AUTH')).toEqual({ name: 'eventrelay-redis', key: 'password' });
    // requirepass goes to redis-server as config on stdin (a here-document), from the environment;
    // exec'd without a pipe, so redis-server is PID 1 and gets the kubelet's SIGTERM.
    const config = stdinConfig(c.command?.[2] ?? '');
    expect(config).toContain('requirepass $REDIS_PASSWORD');
    if (!durable) expect(config).toEqual(['requirepass $REDIS_PASSWORD']);
    const env = r.environment({ ...c, envFrom: c.envFrom ?? [] }, 'redis', redisPod);
    const argv = redisArgv(c, env);
    expect(argv.join(' ')).not.toContain('requirepass');
    expect(argv.join(' ')).not.toContain(TEST_SECRETS['eventrelay-redis/password']);
    // The readiness probe authenticates (REDISCLI_AUTH) and wants PONG, not any reply.
    expect(JSON.stringify(c.readinessProbe)).toMatch(/redis-cli ping \| grep -qx PONG/);
  });

  it('has NetworkPolicies: Redis only from eventrelay’s processes (durable: and the Redis pods, Sentinels too), only ingest open to anyone, admin only from its namespace and Prometheus', () => {
    const policies = r.all<NetworkPolicy>('NetworkPolicy');
    const pods = [
      ...NAMES.map((name) => ({ name, labels: r.deployment(name).spec.template.metadata.labels ?? {} })),
      { name: 'redis', labels: r.one<Workload>('StatefulSet', 'eventrelay-redis').spec.template.metadata.labels ?? {} },
    ];
    const rulesFor = (labels: Record<string, string>) => {
      const selecting = policies.filter(
        (p) => selects(p.spec.podSelector, labels) && (p.spec.policyTypes ?? ['Ingress']).includes('Ingress'),
      );
      return { isolated: selecting.length > 0, rules: selecting.flatMap((p) => p.spec.ingress ?? []) };
    };
    const processPods = pods.filter((p) => p.name !== 'redis');
    for (const pod of pods) {
      const { isolated, rules } = rulesFor(pod.labels);
      // Every pod is isolated: what no policy allows is refused.
      expect({ pod: pod.name, isolated }).toEqual({ pod: pod.name, isolated: true });
      const open = rules.filter((rule) => rule.from === undefined || rule.from.length === 0);
      if (pod.name === 'ingest') {
        expect(open.length).toBeGreaterThan(0);
        expect(open.flatMap((rule) => (rule.ports ?? []).map((p) => p.port))).toEqual([8080]);
      } else {
        expect({ pod: pod.name, openToAnyone: open.length }).toEqual({ pod: pod.name, openToAnyone: 0 });
      }
      const peers = rules.flatMap((rule) => rule.from ?? []);
      if (pod.name === 'redis') {
        // Durable: Sentinel's port too, and the Redis pods reach each other (replication, Sentinels).
        expect(rules.flatMap((rule) => (rule.ports ?? []).map((p) => p.port))).toEqual(durable ? [6379, 26379] : [6379]);
        const admitted = new Set<string>();
        for (const peer of peers) {
          // This namespace's pods only, and of those only eventrelay's processes (not anything else).
          expect(peer.namespaceSelector).toBeUndefined();
          expect(peer.ipBlock).toBeUndefined();
          const these = pods.filter((p) => selects(peer.podSelector ?? {}, p.labels)).map((p) => p.name);
          if (!durable) expect(these.sort()).toEqual(processPods.map((p) => p.name).sort());
          these.forEach((name) => admitted.add(name));
          expect(selects(peer.podSelector ?? {}, { 'app.kubernetes.io/part-of': 'eventrelay' })).toBe(false);
        }
        expect([...admitted].sort()).toEqual([...processPods.map((p) => p.name), ...(durable ? ['redis'] : [])].sort());
        expect(peers.length).toBeGreaterThan(0);
      }
      if (pod.name === 'admin') {
        for (const peer of peers) {
          expect(peer.ipBlock).toBeUndefined();
          // A namespace by name (Prometheus's), never every namespace.
          if (peer.namespaceSelector)
            expect(Object.keys(peer.namespaceSelector.matchLabels ?? {})).toEqual(['kubernetes.io/metadata.name']);
        }
      }
    }
  });

  it('names every image by an exact version (the local eventrelay build only in the base and the durable overlay on it, which prod replaces)', () => {
    for (const w of r.workloads())
      for (const c of w.spec.template.spec.containers) {
        if (dir !== 'k8s/overlays/prod' && c.image === 'eventrelay:local') continue;
        expect({ container: `${w.metadata.name}/${c.name}`, image: c.image, exact: isExactImage(c.image) }).toEqual({
          container: `${w.metadata.name}/${c.name}`,
          image: c.image,
          exact: true,
        });
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
        expect({
          where,
          requests: Object.keys(c.resources?.requests ?? {}).sort(),
          limits: Object.keys(c.resources?.limits ?? {}).sort(),
        }).toEqual({ where, requests: ['cpu', 'memory'], limits: ['cpu', 'memory'] });
        expect(bytes(c.resources?.requests?.['memory'] as string)).toBeLessThanOrEqual(bytes(c.resources?.limits?.['memory'] as string));
      }
    }
  });

  it("has a PodDisruptionBudget selecting each Deployment's pods and no other's", () => {
    const pdbs = r.all<
      Manifest & { spec: { selector: { matchLabels: Record<string, string> }; maxUnavailable?: unknown; minAvailable?: unknown } }
    >('PodDisruptionBudget');
    expect(pdbs.every((p) => p.apiVersion === 'policy/v1')).toBe(true);
    for (const name of NAMES) {
      const labels = r.deployment(name).spec.template.metadata.labels;
      const mine = pdbs.filter((p) => matchesLabels(p.spec.selector.matchLabels, labels));
      expect({ process: name, pdbs: mine.length }).toEqual({ process: name, pdbs: 1 });
      const pdb = mine[0] as (typeof pdbs)[number];
      expect(pdb.spec.maxUnavailable ?? pdb.spec.minAvailable).toBeDefined();
      for (const other of NAMES.filter((n) => n !== name))
        expect(matchesLabels(pdb.spec.selector.matchLabels, r.deployment(other).spec.template.metadata.labels)).toBe(false);
    }
  });

  it('scales webhook-delivery with an autoscaling/v2 HorizontalPodAutoscaler on CPU, and the Deployment leaves replicas to it', () => {
    const hpas = r.all<
      Manifest & {
        spec: {
          scaleTargetRef: { apiVersion: string; kind: string; name: string };
          minReplicas: number;
          maxReplicas: number;
          metrics: { type: string; resource?: { name: string } }[];
        };
      }
    >('HorizontalPodAutoscaler');
    const hpa = hpas.filter(
      (h) => h.spec.scaleTargetRef.kind === 'Deployment' && h.spec.scaleTargetRef.name === 'eventrelay-webhook-delivery',
    );
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
    const sts = r
      .all<Workload>('StatefulSet')
      .filter((s) => s.spec.template.spec.containers.some((c) => splitImage(c.image).name === 'redis'));
    expect(sts).toHaveLength(1);
    const redis = sts[0] as Workload;
    const c = redis.spec.template.spec.containers.find((x) => splitImage(x.image).name === 'redis') as Container;
    const env = r.environment({ ...c, envFrom: c.envFrom ?? [] }, 'redis', redisPod);
    const argv = redisArgv(c, env);
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
    const timeoutMs = numberOf(
      loadFor('webhook-delivery', r.environment(r.container('webhook-delivery'), 'webhook-delivery')),
      'DELIVERY_TIMEOUT_MS',
    );
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
    const monitors = r.all<
      Manifest & {
        spec: {
          selector: { matchLabels: Record<string, string> };
          endpoints: { port: string; path?: string }[];
          namespaceSelector?: unknown;
        };
      }
    >('ServiceMonitor');
    expect(monitors).toHaveLength(1);
    const monitor = monitors[0] as (typeof monitors)[number];
    const endpointPorts = monitor.spec.endpoints.map((e) => e.port);
    for (const e of monitor.spec.endpoints) expect(e.path ?? '/metrics').toBe('/metrics');
    const services = NAMES.map((n) => r.one<Service>('Service', `eventrelay-${n}`));
    for (const svc of services) {
      expect({ service: svc.metadata.name, selected: matchesLabels(monitor.spec.selector.matchLabels, svc.metadata.labels ?? {}) }).toEqual(
        { service: svc.metadata.name, selected: true },
      );
      expect({
        service: svc.metadata.name,
        scraped: svc.spec.ports.filter((p) => p.name !== undefined && endpointPorts.includes(p.name)).length,
      }).toEqual({ service: svc.metadata.name, scraped: 1 });
    }
    // Every endpoint's port name is one of the Services'.
    for (const port of endpointPorts) expect(services.some((s) => s.spec.ports.some((p) => p.name === port))).toBe(true);
    // Only eventrelay Services: Redis exports no /metrics.
    for (const svc of r.all<Service>('Service').filter((s) => !services.includes(s)))
      expect(matchesLabels(monitor.spec.selector.matchLabels, svc.metadata.labels ?? {})).toBe(false);
  });

  it('runs every pod as a non-root user', () => {
    for (const w of r.workloads()) {
      const pod = w.spec.template.spec;
      for (const c of pod.containers) {
        const nonRoot = c.securityContext?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot;
        const uid = c.securityContext?.runAsUser ?? pod.securityContext?.runAsUser;
        expect({ where: `${w.metadata.name}/${c.name}`, nonRoot, rootUid: uid === 0 }).toEqual({
          where: `${w.metadata.name}/${c.name}`,
          nonRoot: true,
          rootUid: false,
        });
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
    for (const o of prod.objects.filter((x) => !CLUSTER_SCOPED.has(x.kind)))
      expect({ object: `${o.kind}/${o.metadata.name}`, namespace: o.metadata.namespace }).toEqual({
        object: `${o.kind}/${o.metadata.name}`,
        namespace: 'eventrelay',
      });
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
        expect({ container: `${w.metadata.name}/${c.name}`, image }).toEqual({
          container: `${w.metadata.name}/${c.name}`,
          image: expected,
        });
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
