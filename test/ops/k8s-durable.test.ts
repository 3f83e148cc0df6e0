/**
 * k8s/overlays/durable as test/support/kustomize.ts renders it: Redis as three pods, each a Redis
 * and a Sentinel, named through the headless Service; the password from the Secret, in no command
 * line; every process finding the primary through the Sentinels and ingest in durable mode; the
 * NetworkPolicies evaluated against the pods' labels (exactly the flows the Sentinels and
 * replication need); a PodDisruptionBudget; and nothing else of the base changed. What every
 * rendering shares (probes, resources, images, non-root, …) is in k8s.test.ts, which renders this
 * overlay too.
 */
import path from 'node:path';
import { renderKustomization, type Manifest } from '../support/kustomize';
import {
  Rendered,
  allowed,
  resolvePort,
  selects,
  splitImage,
  TEST_SECRETS,
  matchesLabels,
  type Container,
  type NetworkPolicy,
  type Pod,
  type Service,
  type Workload,
} from './k8s-objects';
import { REPO_ROOT as ROOT } from './promql-names';
import { NAMES, loadFor, isExactImage, stdinConfig } from './deployment';

const r = new Rendered(renderKustomization(path.join(ROOT, 'k8s/overlays/durable')));
const base = new Rendered(renderKustomization(path.join(ROOT, 'k8s/base')));
const NAMESPACE = 'eventrelay';

const sts = r.one<Workload>('StatefulSet', 'eventrelay-redis');
const serviceName = sts.spec.serviceName as string;
const pods = [0, 1, 2].map((i) => ({ name: `${sts.metadata.name}-${i}`, namespace: NAMESPACE }));
/** The name a pod is reached by: <pod>.<governing headless Service>, resolved in its namespace. */
const dnsName = (pod: string) => `${pod}.${serviceName}`;
const container = (name: string) => {
  const c = sts.spec.template.spec.containers.find((x) => x.name === name);
  if (!c) throw new Error(`no container ${name} in the Redis pods`);
  return c;
};
const redisLabels = sts.spec.template.metadata.labels;

/** The lines the Sentinel script writes to its config file (printf '%s\n' 'line' "line" … >file), unexpanded. */
function sentinelConfig(script: string): { lines: string[]; file: string } {
  const m = /printf '%s\\n' \\\n([\s\S]*?)\n\s*>(\S+)\n/.exec(script);
  if (!m) throw new Error(`no printf of the config in:\n${script}`);
  return { lines: [...(m[1] as string).matchAll(/^\s*(['"])(.*)\1 \\$/gm)].map((x) => x[2] as string), file: m[2] as string };
}

describe('k8s/overlays/durable', () => {
  it('runs Redis as three pods of a Redis and a Sentinel, on the exact image of the base, started in parallel', () => {
    expect(sts.spec.replicas).toBe(3);
    expect(sts.spec.template.spec.containers.map((c) => c.name)).toEqual(['redis', 'sentinel']);
    const baseImage = base.one<Workload>('StatefulSet', 'eventrelay-redis').spec.template.spec.containers[0]?.image as string;
    expect(isExactImage(baseImage)).toBe(true);
    for (const c of sts.spec.template.spec.containers)
      expect({ container: c.name, image: c.image }).toEqual({ container: c.name, image: baseImage });
    expect(splitImage(baseImage).name).toBe('redis');
    // OrderedReady would hold pods 1 and 2 until pod 0 is ready, and a Sentinel is ready only with a quorum.
    expect(sts.spec.podManagementPolicy).toBe('Parallel');
  });

  it('spreads the Redis pods over nodes (preferred), counting only Redis pods', () => {
    const terms = sts.spec.template.spec.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
    expect(terms).toHaveLength(1);
    const term = terms[0]?.podAffinityTerm;
    expect(term?.topologyKey).toBe('kubernetes.io/hostname');
    expect(selects(term?.labelSelector ?? {}, redisLabels)).toBe(true);
    for (const name of NAMES) expect(selects(term?.labelSelector ?? {}, r.deployment(name).spec.template.metadata.labels)).toBe(false);
  });

  it('names every pod through the headless Service, published before the pods are ready, with both ports', () => {
    const svc = r.one<Service>('Service', serviceName);
    expect(svc.spec.clusterIP).toBe('None');
    // Redis and the Sentinels must resolve each other while starting (readiness needs them).
    expect(svc.spec.publishNotReadyAddresses).toBe(true);
    expect(matchesLabels(svc.spec.selector, redisLabels)).toBe(true);
    const target = (port: number) => {
      const p = svc.spec.ports.find((x) => x.port === port);
      const c = port === 6379 ? container('redis') : container('sentinel');
      return resolvePort(c, p?.targetPort ?? p?.port, `Service ${serviceName} port ${port}`);
    };
    expect([target(6379), target(26379)]).toEqual([6379, 26379]);
  });

  it('starts each Redis announcing its pod name, from the Sentinels, pod 0 as the first primary', () => {
    const c = container('redis');
    for (const pod of pods) {
      const env = r.environment(c, 'redis', pod);
      expect({ pod: pod.name, self: env['REDIS_SELF'], first: env['REDIS_INITIAL_PRIMARY'] }).toEqual({
        pod: pod.name,
        self: dnsName(pod.name),
        first: dnsName(pods[0]?.name as string),
      });
      expect(env['SENTINEL_HOSTS']?.split(' ')).toEqual(pods.map((p) => dnsName(p.name)));
    }
    expect(stdinConfig(c.command?.[2] ?? '')).toEqual([
      'requirepass $REDIS_PASSWORD',
      'masterauth $REDIS_PASSWORD',
      'replica-announce-ip $REDIS_SELF',
      '$role',
    ]);
    // A replica is ready only once in sync: a rolling update moves on when this pod holds the data.
    expect(JSON.stringify(c.readinessProbe)).toMatch(
      /redis-cli ping \| grep -qx PONG && redis-cli info replication \| grep -qE '\^\(role:master\|master_link_status:up\)'/,
    );
  });

  it('starts each Sentinel announcing its pod name, watching the three Redis, its config in a memory emptyDir', () => {
    const c = container('sentinel');
    for (const pod of pods) {
      const env = r.environment(c, 'sentinel', pod);
      expect({ pod: pod.name, self: env['SENTINEL_SELF'], first: env['REDIS_INITIAL_PRIMARY'] }).toEqual({
        pod: pod.name,
        self: dnsName(pod.name),
        first: dnsName(pods[0]?.name as string),
      });
      expect(env['SENTINEL_HOSTS']?.split(' ')).toEqual(pods.map((p) => dnsName(p.name)));
      expect(env['REDIS_HOSTS']?.split(' ')).toEqual(pods.map((p) => dnsName(p.name)));
    }
    const { lines, file } = sentinelConfig(c.command?.[2] ?? '');
    const dir = path.posix.dirname(file);
    expect(lines).toEqual(
      expect.arrayContaining([
        `port ${resolvePort(c, 'sentinel', 'sentinel')}`,
        `dir ${dir}`,
        'sentinel resolve-hostnames yes',
        'sentinel announce-hostnames yes',
        'sentinel announce-ip $SENTINEL_SELF',
        'sentinel monitor eventrelay $primary 2',
      ]),
    );
    const mount = (c.volumeMounts ?? []).find((m) => m.mountPath === dir);
    const volume = (sts.spec.template.spec.volumes ?? []).find((v) => v.name === mount?.name);
    // In memory: the file holds the password.
    expect(volume?.emptyDir?.medium).toBe('Memory');
    expect(c.securityContext).toEqual(expect.objectContaining({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false }));
    expect(JSON.stringify(c.readinessProbe)).toMatch(/redis-cli -p 26379 sentinel ckquorum eventrelay \| grep -q '\^OK'/);
  });

  it('gives every Redis and Sentinel the password from the Secret eventrelay-redis, in no command line or ConfigMap', () => {
    for (const c of sts.spec.template.spec.containers) {
      for (const variable of ['REDIS_PASSWORD', 'REDISCLI_AUTH']) {
        const entries = (c.env ?? []).filter((e) => e.name === variable);
        expect({ container: c.name, variable, entries }).toEqual({
          container: c.name,
          variable,
          entries: [{ name: variable, valueFrom: { secretKeyRef: { name: 'eventrelay-redis', key: 'password' } } }],
        });
      }
      const env = r.environment(c, c.name, pods[1]);
      const argv = [...(c.command ?? []), ...(c.args ?? [])].join('\n');
      expect(argv).not.toContain(TEST_SECRETS['eventrelay-redis/password']);
      expect(argv).not.toMatch(/--(requirepass|masterauth)|redis-cli[^\n]* -a /);
      // No literal value anywhere but through the Secret.
      for (const e of c.env ?? [])
        expect({ variable: e.name, literal: e.value?.includes(env['REDIS_PASSWORD'] as string) ?? false }).toEqual({
          variable: e.name,
          literal: false,
        });
    }
    const { lines } = sentinelConfig(container('sentinel').command?.[2] ?? '');
    expect(lines).toEqual(expect.arrayContaining(['requirepass $REDIS_PASSWORD', 'sentinel auth-pass eventrelay $REDIS_PASSWORD']));
    for (const cm of r.all<Manifest & { data?: Record<string, string> }>('ConfigMap'))
      expect(Object.keys(cm.data ?? {}).filter((k) => /PASSWORD|REDIS_URL/.test(k))).toEqual([]);
  });

  it('gives every process the Sentinels, their password from the Secret, and ingest durable mode', () => {
    const monitored = /^sentinel monitor (\S+) /m.exec(sentinelConfig(container('sentinel').command?.[2] ?? '').lines.join('\n'))?.[1];
    for (const name of NAMES) {
      const c = r.container(name);
      const env = loadFor(name, r.environment(c, name));
      expect({ process: name, sentinels: env['REDIS_SENTINELS'] }).toEqual({
        process: name,
        sentinels: pods.map((p) => ({ host: dnsName(p.name), port: resolvePort(container('sentinel'), 'sentinel', 'sentinel') })),
      });
      expect({ process: name, monitored: env['REDIS_SENTINEL_NAME'] }).toEqual({ process: name, monitored });
      expect({ process: name, password: (c.env ?? []).filter((e) => e.name === 'REDIS_SENTINEL_PASSWORD') }).toEqual({
        process: name,
        password: [{ name: 'REDIS_SENTINEL_PASSWORD', valueFrom: { secretKeyRef: { name: 'eventrelay-redis', key: 'password' } } }],
      });
      expect({ process: name, durable: env['INGEST_DURABLE_REPLICAS'] }).toEqual({
        process: name,
        durable: name === 'ingest' ? 1 : undefined,
      });
    }
  });

  it('has NetworkPolicies admitting exactly: Redis and Sentinel ports from the processes and the Redis pods, nothing else to Redis', () => {
    const policies = r.all<NetworkPolicy>('NetworkPolicy');
    const inNamespace = (name: string, labels: Record<string, string>): Pod => ({ name, namespace: NAMESPACE, labels });
    const processes = NAMES.map((name) => inNamespace(name, r.deployment(name).spec.template.metadata.labels));
    const redis = inNamespace('redis', redisLabels);
    const others = [
      inNamespace('another pod of the namespace', { app: 'something-else' }),
      inNamespace('another eventrelay-labelled pod', { 'app.kubernetes.io/part-of': 'eventrelay' }),
      { name: 'Prometheus', namespace: 'monitoring', labels: { 'app.kubernetes.io/name': 'prometheus' } },
      { name: 'a Redis-looking pod elsewhere', namespace: 'other', labels: redisLabels },
    ];
    const sources = [...processes, redis, ...others];
    const admittedTo = (target: Pod, port: number) =>
      sources
        .filter((s) => allowed(policies, target, s, port, NAMESPACE))
        .map((s) => s.name)
        .sort();
    const needed = [...NAMES, 'redis'].sort();
    expect({ port: 6379, admitted: admittedTo(redis, 6379) }).toEqual({ port: 6379, admitted: needed });
    expect({ port: 26379, admitted: admittedTo(redis, 26379) }).toEqual({ port: 26379, admitted: needed });
    for (const port of [8080, 8081, 9101, 16379, 26380])
      expect({ port, admitted: admittedTo(redis, port) }).toEqual({ port, admitted: [] });
    // The processes' own ports are as in the base: Redis gets nothing more there.
    for (const p of processes)
      for (const port of [8080, 8081, 9101, 9102, 9103])
        expect(allowed(policies, p, redis, port, NAMESPACE)).toBe(
          allowed(base.all<NetworkPolicy>('NetworkPolicy'), p, redis, port, NAMESPACE),
        );
  });

  it('has a PodDisruptionBudget letting one Redis pod of three go at a time', () => {
    const pdbs = r
      .all<Manifest & { apiVersion: string; spec: { selector: { matchLabels: Record<string, string> }; maxUnavailable?: number } }>(
        'PodDisruptionBudget',
      )
      .filter((p) => matchesLabels(p.spec.selector.matchLabels, redisLabels));
    expect(pdbs).toHaveLength(1);
    const pdb = pdbs[0] as (typeof pdbs)[number];
    expect(pdb.apiVersion).toBe('policy/v1');
    // Two left: a primary and a replica to confirm writes, and the Sentinels' quorum.
    expect(pdb.spec.maxUnavailable).toBe(1);
    for (const name of NAMES)
      expect(matchesLabels(pdb.spec.selector.matchLabels, r.deployment(name).spec.template.metadata.labels)).toBe(false);
  });

  it('changes nothing else of the base', () => {
    const patched = new Set([
      'ConfigMap/eventrelay-env',
      'StatefulSet/eventrelay-redis',
      'Service/eventrelay-redis',
      'NetworkPolicy/eventrelay-redis',
      ...NAMES.map((n) => `Deployment/eventrelay-${n}`),
    ]);
    const key = (o: Manifest) => `${o.kind}/${o.metadata.name}`;
    expect(r.objects.map(key).sort()).toEqual([...base.objects.map(key), 'PodDisruptionBudget/eventrelay-redis'].sort());
    for (const o of base.objects.filter((x) => !patched.has(key(x)))) expect(r.one(o.kind, o.metadata.name)).toEqual(o);
    // The patched Deployments differ only in their container's env.
    for (const name of NAMES) {
      const strip = (w: Workload) => ({
        ...w,
        spec: {
          ...w.spec,
          template: {
            ...w.spec.template,
            spec: {
              ...w.spec.template.spec,
              containers: w.spec.template.spec.containers.map((c: Container) => ({ ...c, env: undefined })),
            },
          },
        },
      });
      expect(strip(r.deployment(name))).toEqual(strip(base.deployment(name)));
    }
  });
});
