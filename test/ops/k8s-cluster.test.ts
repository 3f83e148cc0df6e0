/**
 * k8s/overlays/cluster as test/support/kustomize.ts renders it: Redis as six cluster nodes named
 * through the headless Service, a Job that creates the cluster only when no node is in one, the
 * password from the Secret in no command line, every process on the cluster (REDIS_CLUSTER_NODES,
 * EVENTRELAY_SHARDS), the NetworkPolicies evaluated against the pods' labels (exactly the flows a
 * cluster needs), a PodDisruptionBudget, and nothing else of the base changed. The scripts run for
 * real in cluster-redis.test.ts; compose-cluster.test.ts checks that compose runs the same ones.
 */
import path from 'node:path';
import { renderKustomization, type Manifest } from '../support/kustomize';
import {
  Rendered,
  allowed,
  bytes,
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
import { NAMES, clusterSeeds, info, loadFor, isExactImage, stdinConfig } from './deployment';

const r = new Rendered(renderKustomization(path.join(ROOT, 'k8s/overlays/cluster')));
const base = new Rendered(renderKustomization(path.join(ROOT, 'k8s/base')));
const NAMESPACE = 'eventrelay';
const CLUSTER_VARIABLES = ['REDIS_CLUSTER_NODES', 'EVENTRELAY_SHARDS'];

const sts = r.one<Workload>('StatefulSet', 'eventrelay-redis');
const serviceName = sts.spec.serviceName as string;
const pods = [0, 1, 2, 3, 4, 5].map((i) => ({ name: `${sts.metadata.name}-${i}`, namespace: NAMESPACE }));
/** The name a pod is reached by: <pod>.<governing headless Service>, resolved in its namespace. */
const dnsName = (pod: string) => `${pod}.${serviceName}`;
const node = (() => {
  const c = sts.spec.template.spec.containers.find((x) => x.name === 'redis');
  if (!c) throw new Error('no container redis in the Redis pods');
  return c;
})();
const redisLabels = sts.spec.template.metadata.labels;
const job = r.one<Workload & { spec: { backoffLimit?: number; ttlSecondsAfterFinished?: number } }>(
  'Job',
  'eventrelay-redis-cluster-create',
);
const jobPod = job.spec.template as Workload['spec']['template'] & { spec: { restartPolicy?: string } };
const creator = jobPod.spec.containers[0] as Container;
const redisPort = resolvePort(node, 'redis', 'redis');

describe('k8s/overlays/cluster', () => {
  it('runs Redis as six pods of one container, on the exact image of the base, started in parallel', () => {
    expect(sts.spec.replicas).toBe(6);
    expect(sts.spec.template.spec.containers.map((c) => c.name)).toEqual(['redis']);
    const baseImage = base.one<Workload>('StatefulSet', 'eventrelay-redis').spec.template.spec.containers[0]?.image as string;
    expect(isExactImage(baseImage)).toBe(true);
    expect(splitImage(baseImage).name).toBe('redis');
    expect(node.image).toBe(baseImage);
    expect(creator.image).toBe(baseImage);
    // OrderedReady would hold pod 1 until pod 0 is ready, and a node is ready only once the cluster exists.
    expect(sts.spec.podManagementPolicy).toBe('Parallel');
  });

  it('spreads the Redis pods over nodes (preferred), counting only Redis pods', () => {
    const terms = sts.spec.template.spec.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
    expect(terms).toHaveLength(1);
    const term = terms[0]?.podAffinityTerm;
    expect(term?.topologyKey).toBe('kubernetes.io/hostname');
    expect(selects(term?.labelSelector ?? {}, redisLabels)).toBe(true);
    expect(selects(term?.labelSelector ?? {}, jobPod.metadata.labels)).toBe(false);
    for (const name of NAMES) expect(selects(term?.labelSelector ?? {}, r.deployment(name).spec.template.metadata.labels)).toBe(false);
  });

  it('names every pod through the headless Service, published before the pods are ready; the Job’s pod is not one of them', () => {
    const svc = r.one<Service>('Service', serviceName);
    expect(svc.spec.clusterIP).toBe('None');
    // The Job resolves the nodes before the cluster exists, and a node is ready only once it does.
    expect(svc.spec.publishNotReadyAddresses).toBe(true);
    expect(matchesLabels(svc.spec.selector, redisLabels)).toBe(true);
    expect(matchesLabels(svc.spec.selector, jobPod.metadata.labels)).toBe(false);
    const p = svc.spec.ports.find((x) => x.port === 6379);
    expect(resolvePort(node, p?.targetPort ?? p?.port, `Service ${serviceName} port 6379`)).toBe(6379);
    // The cluster bus is the client port + 10000.
    expect(resolvePort(node, 'cluster-bus', 'redis')).toBe(redisPort + 10000);
  });

  it('starts each node cluster-enabled, announcing its pod name, with its state on its volume', () => {
    for (const pod of pods) {
      const env = r.environment(node, 'redis', pod);
      expect({ pod: pod.name, self: env['REDIS_SELF'], hosts: env['REDIS_HOSTS']?.split(' ') }).toEqual({
        pod: pod.name,
        self: dnsName(pod.name),
        hosts: pods.map((p) => dnsName(p.name)),
      });
    }
    expect(stdinConfig(node.command?.[2] ?? '')).toEqual([
      'requirepass $REDIS_PASSWORD',
      'masterauth $REDIS_PASSWORD',
      'cluster-enabled yes',
      'cluster-config-file nodes.conf',
      'cluster-node-timeout 5000',
      'cluster-announce-hostname $REDIS_SELF',
      'cluster-preferred-endpoint-type hostname',
    ]);
    // nodes.conf is relative to the dir, which is the volume of the volumeClaimTemplate.
    const args = node.args ?? [];
    const dir = args[args.indexOf('--dir') + 1];
    const claims = (sts.spec.volumeClaimTemplates ?? []).map((t) => t.metadata.name);
    expect((node.volumeMounts ?? []).filter((m) => m.mountPath === dir).map((m) => claims.includes(m.name))).toEqual([true]);
    // AOF and noeviction stay the base's.
    expect(args).toEqual(base.one<Workload>('StatefulSet', 'eventrelay-redis').spec.template.spec.containers[0]?.args);
    // Ready once every slot is served, and a replica once in sync: a rolling update moves on only then.
    expect(JSON.stringify(node.readinessProbe)).toMatch(
      /redis-cli ping \| grep -qx PONG && redis-cli cluster info \| grep -q '\^cluster_state:ok' && redis-cli info replication \| grep -qE '\^\(role:master\|master_link_status:up\)'/,
    );
  });

  it('creates the cluster with a Job that asks every node first and creates only when none is in a cluster', () => {
    expect(job.apiVersion).toBe('batch/v1');
    const env = r.environment(creator, 'create', { name: 'eventrelay-redis-cluster-create-x', namespace: NAMESPACE });
    // Primaries first: pods 0 to 2.
    expect(env['REDIS_HOSTS']?.split(' ')).toEqual(pods.map((p) => dnsName(p.name)));
    const script = creator.command?.[2] ?? '';
    expect(creator.command?.slice(0, 2)).toEqual(['sh', '-c']);
    const lines = script.split('\n');
    const create = lines.findIndex((l) => /^\s*redis-cli --cluster create /.test(l));
    expect(create).toBeGreaterThan(-1);
    expect(lines[create]).toMatch(/--cluster create \$addresses --cluster-replicas 1 --cluster-yes$/);
    const before = lines.slice(0, create).join('\n');
    expect(before).toMatch(/redis-cli -h "\$1" cluster info/);
    expect(before).toMatch(/cluster_known_nodes\)" != 1 \] \|\| \[ "\$\(field "\$host" cluster_slots_assigned\)" != 0 \]/);
    expect(before).toMatch(/if \[ -n "\$created" \]; then\n[^\n]*nothing to create"\nelse\n/);
    // Retried when the nodes are not there yet; deleted a while after it finished, so that the next
    // apply creates it again (it then finds the cluster and does nothing).
    expect(jobPod.spec.restartPolicy).toMatch(/^(OnFailure|Never)$/);
    expect(job.spec.backoffLimit).toBeGreaterThan(0);
    expect(job.spec.ttlSecondsAfterFinished).toBeGreaterThan(0);
  });

  it('gives every node and the Job the password from the Secret eventrelay-redis, in no command line or ConfigMap', () => {
    const variables: [Container, string[]][] = [
      [node, ['REDIS_PASSWORD', 'REDISCLI_AUTH']],
      [creator, ['REDISCLI_AUTH']],
    ];
    for (const [c, names] of variables) {
      for (const variable of names) {
        const entries = (c.env ?? []).filter((e) => e.name === variable);
        expect({ container: c.name, variable, entries }).toEqual({
          container: c.name,
          variable,
          entries: [{ name: variable, valueFrom: { secretKeyRef: { name: 'eventrelay-redis', key: 'password' } } }],
        });
      }
      const argv = [...(c.command ?? []), ...(c.args ?? [])].join('\n');
      expect(argv).not.toContain(TEST_SECRETS['eventrelay-redis/password']);
      expect(argv).not.toMatch(/--(requirepass|masterauth|pass|askpass)\b|redis-cli[^\n]* -a /);
      for (const e of c.env ?? [])
        expect({ variable: e.name, literal: e.value?.includes(TEST_SECRETS['eventrelay-redis/password'] as string) ?? false }).toEqual({
          variable: e.name,
          literal: false,
        });
    }
    for (const cm of r.all<Manifest & { data?: Record<string, string> }>('ConfigMap'))
      expect(Object.keys(cm.data ?? {}).filter((k) => /PASSWORD|REDIS_URL/.test(k))).toEqual([]);
  });

  it('runs the Job as a non-root user on a read-only root, with resources, apart from the Redis pods’ selectors', () => {
    const pod = jobPod.spec;
    expect(pod.securityContext?.runAsNonRoot ?? creator.securityContext?.runAsNonRoot).toBe(true);
    expect(pod.securityContext?.runAsUser ?? creator.securityContext?.runAsUser).toBeGreaterThan(0);
    expect(creator.securityContext).toEqual(expect.objectContaining({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false }));
    expect(Object.keys(creator.resources?.requests ?? {}).sort()).toEqual(['cpu', 'memory']);
    expect(Object.keys(creator.resources?.limits ?? {}).sort()).toEqual(['cpu', 'memory']);
    expect(bytes(creator.resources?.requests?.['memory'] as string)).toBeLessThanOrEqual(
      bytes(creator.resources?.limits?.['memory'] as string),
    );
    // Selected by the default-deny policy like every eventrelay pod.
    expect(jobPod.metadata.labels['app.kubernetes.io/part-of']).toBe('eventrelay');
  });

  it('gives every process the six nodes and 12 shards through the ConfigMap, and changes nothing else of its environment', () => {
    for (const name of NAMES) {
      const c = r.container(name);
      const env = r.environment(c, name);
      expect({ process: name, nodes: clusterSeeds(env['REDIS_CLUSTER_NODES']) }).toEqual({
        process: name,
        nodes: pods.map((p) => `${dnsName(p.name)}:${redisPort}`),
      });
      expect({ process: name, shards: env['EVENTRELAY_SHARDS'] }).toEqual({ process: name, shards: '12' });
      expect({ process: name, prefix: env['EVENTRELAY_PREFIX'] }).toEqual({ process: name, prefix: expect.stringMatching(/\{[^{}]+\}/) });
      expect({ process: name, sentinels: env['REDIS_SENTINELS'] }).toEqual({ process: name, sentinels: undefined });
      const unknown = r.variableNames(c).filter((k) => !(k in info(name).spec));
      expect({ process: name, unknown }).toEqual({ process: name, unknown: [] });
    }
  });

  it('loads in every process: the nodes and the shards as the process reads them', () => {
    for (const name of NAMES) {
      const loaded = loadFor(name, r.environment(r.container(name), name));
      expect({ process: name, nodes: clusterSeeds(loaded['REDIS_CLUSTER_NODES']) }).toEqual({
        process: name,
        nodes: pods.map((p) => `${dnsName(p.name)}:${redisPort}`),
      });
      expect({ process: name, shards: loaded['EVENTRELAY_SHARDS'] }).toEqual({ process: name, shards: 12 });
    }
  });

  it('has NetworkPolicies admitting exactly: 6379 from the processes, the Job and the nodes; the cluster bus from the nodes only', () => {
    const policies = r.all<NetworkPolicy>('NetworkPolicy');
    const inNamespace = (name: string, labels: Record<string, string>): Pod => ({ name, namespace: NAMESPACE, labels });
    const processes = NAMES.map((name) => inNamespace(name, r.deployment(name).spec.template.metadata.labels));
    const redis = inNamespace('redis', redisLabels);
    const creatorPod = inNamespace('create', jobPod.metadata.labels);
    const others = [
      inNamespace('another pod of the namespace', { app: 'something-else' }),
      inNamespace('another eventrelay-labelled pod', { 'app.kubernetes.io/part-of': 'eventrelay' }),
      { name: 'Prometheus', namespace: 'monitoring', labels: { 'app.kubernetes.io/name': 'prometheus' } },
      { name: 'a Redis-looking pod elsewhere', namespace: 'other', labels: redisLabels },
    ];
    const sources = [...processes, redis, creatorPod, ...others];
    const admittedTo = (target: Pod, port: number) =>
      sources
        .filter((s) => allowed(policies, target, s, port, NAMESPACE))
        .map((s) => s.name)
        .sort();
    expect({ port: 6379, admitted: admittedTo(redis, 6379) }).toEqual({ port: 6379, admitted: [...NAMES, 'create', 'redis'].sort() });
    expect({ port: 16379, admitted: admittedTo(redis, 16379) }).toEqual({ port: 16379, admitted: ['redis'] });
    for (const port of [8080, 8081, 9101, 26379, 16380])
      expect({ port, admitted: admittedTo(redis, port) }).toEqual({ port, admitted: [] });
    // The Job's pod takes no connection at all, and the processes' ports are as in the base.
    for (const port of [6379, 8080, 8081, 9101]) expect({ port, admitted: admittedTo(creatorPod, port) }).toEqual({ port, admitted: [] });
    for (const p of processes)
      for (const port of [8080, 8081, 9101, 9102, 9103])
        expect(allowed(policies, p, redis, port, NAMESPACE)).toBe(
          allowed(base.all<NetworkPolicy>('NetworkPolicy'), p, redis, port, NAMESPACE),
        );
  });

  it('has a PodDisruptionBudget letting one Redis pod of six go at a time, and selecting only Redis pods', () => {
    const pdbs = r
      .all<Manifest & { apiVersion: string; spec: { selector: { matchLabels: Record<string, string> }; maxUnavailable?: number } }>(
        'PodDisruptionBudget',
      )
      .filter((p) => matchesLabels(p.spec.selector.matchLabels, redisLabels));
    expect(pdbs).toHaveLength(1);
    const pdb = pdbs[0] as (typeof pdbs)[number];
    expect(pdb.apiVersion).toBe('policy/v1');
    // Two at once could be a primary and its replica: a third of the slots unserved.
    expect(pdb.spec.maxUnavailable).toBe(1);
    expect(matchesLabels(pdb.spec.selector.matchLabels, jobPod.metadata.labels)).toBe(false);
    for (const name of NAMES)
      expect(matchesLabels(pdb.spec.selector.matchLabels, r.deployment(name).spec.template.metadata.labels)).toBe(false);
  });

  it('changes nothing else of the base', () => {
    const patched = new Set([
      'ConfigMap/eventrelay-env',
      'StatefulSet/eventrelay-redis',
      'Service/eventrelay-redis',
      'NetworkPolicy/eventrelay-redis',
    ]);
    const key = (o: Manifest) => `${o.kind}/${o.metadata.name}`;
    expect(r.objects.map(key).sort()).toEqual(
      [...base.objects.map(key), 'PodDisruptionBudget/eventrelay-redis', 'Job/eventrelay-redis-cluster-create'].sort(),
    );
    // The Deployments included: the processes get the cluster through the ConfigMap alone.
    for (const o of base.objects.filter((x) => !patched.has(key(x)))) expect(r.one(o.kind, o.metadata.name)).toEqual(o);
    // The ConfigMap only gains the cluster's two variables.
    const data = (rendered: Rendered) => rendered.one<Manifest & { data: Record<string, string> }>('ConfigMap', 'eventrelay-env').data;
    const added = Object.keys(data(r)).filter((k) => !(k in data(base)));
    expect(added.sort()).toEqual([...CLUSTER_VARIABLES].sort());
    for (const [k, v] of Object.entries(data(base))) expect({ key: k, value: data(r)[k] }).toEqual({ key: k, value: v });
  });
});
