/**
 * The rendered Kubernetes objects the deployment tests read: workloads, containers, probes,
 * Services, and the quantities and port references in them.
 */
import type { Manifest } from '../support/kustomize';
import { TEST_REDIS_PASSWORD, TEST_TOKEN } from './deployment';

/**
 * What the tests take the Secrets an operator creates (docs/deployment.md) to hold, by
 * `<secret>/<key>`; any other key reads as TEST_TOKEN.
 */
export const TEST_SECRETS: Readonly<Record<string, string>> = {
  'eventrelay-redis/password': TEST_REDIS_PASSWORD,
  'eventrelay-redis/url': `redis://:${TEST_REDIS_PASSWORD}@eventrelay-redis:6379`,
};

interface Probe {
  httpGet?: { path: string; port: number | string };
  tcpSocket?: { port: number | string };
  exec?: { command: string[] };
}

interface EnvEntry {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string };
    configMapKeyRef?: { name: string; key: string };
    fieldRef?: { fieldPath: string };
    resourceFieldRef?: unknown;
  };
}

/** The pod a container's environment is read for: what fieldRef metadata.name and metadata.namespace give. */
export interface PodIdentity {
  readonly name: string;
  readonly namespace: string;
}

export interface Container {
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

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: {
    containers: Container[];
    initContainers?: Container[];
    volumes?: { name: string; emptyDir?: { medium?: string; sizeLimit?: string } }[];
    terminationGracePeriodSeconds?: number;
    securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
    affinity?: {
      podAntiAffinity?: {
        preferredDuringSchedulingIgnoredDuringExecution?: {
          weight: number;
          podAffinityTerm: { topologyKey: string; labelSelector: LabelSelector };
        }[];
        requiredDuringSchedulingIgnoredDuringExecution?: { topologyKey: string; labelSelector: LabelSelector }[];
      };
    };
  };
}

export interface Workload extends Manifest {
  spec: {
    replicas?: number;
    serviceName?: string;
    podManagementPolicy?: string;
    selector: { matchLabels: Record<string, string> };
    template: PodTemplate;
    volumeClaimTemplates?: { metadata: { name: string } }[];
  };
}

export interface Service extends Manifest {
  spec: {
    selector: Record<string, string>;
    ports: { name?: string; port: number; targetPort?: number | string }[];
    clusterIP?: string;
    publishNotReadyAddresses?: boolean;
  };
}

interface PolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: unknown;
}

export interface NetworkPolicy extends Manifest {
  spec: {
    podSelector: LabelSelector;
    policyTypes?: string[];
    ingress?: { from?: PolicyPeer[]; ports?: { port?: number | string; protocol?: string }[] }[];
  };
}

/** Whether a label selector (matchLabels and matchExpressions) selects these labels; {} selects everything. */
export function selects(selector: LabelSelector, labels: Record<string, string>): boolean {
  if (!Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v)) return false;
  return (selector.matchExpressions ?? []).every((e) => {
    const has = e.key in labels;
    const value = labels[e.key] as string;
    if (e.operator === 'In') return has && (e.values ?? []).includes(value);
    if (e.operator === 'NotIn') return !has || !(e.values ?? []).includes(value);
    if (e.operator === 'Exists') return has;
    if (e.operator === 'DoesNotExist') return !has;
    throw new Error(`unknown operator ${e.operator}`);
  });
}

export const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'PersistentVolume',
  'StorageClass',
  'PriorityClass',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
  'APIService',
]);
const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job']);

export const matchesLabels = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

/** Kubernetes quantities in bytes: 512Mi, 1Gi, 1G, 1000. */
export function bytes(quantity: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity);
  if (!m) throw new Error(`not a memory quantity: ${quantity}`);
  const unit: Record<string, number> = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Number(m[1]) * (m[2] ? (unit[m[2]] as number) : 1);
}

/** Redis memory sizes in bytes: 768mb, 3gb, 1g (= 10^9), 100 (bytes). */
export function redisBytes(size: string): number {
  const m = /^(\d+)(kb|mb|gb|k|m|g)?$/i.exec(size);
  if (!m) throw new Error(`not a Redis memory size: ${size}`);
  const unit: Record<string, number> = { kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3, k: 1e3, m: 1e6, g: 1e9 };
  return Number(m[1]) * (m[2] ? (unit[m[2].toLowerCase()] as number) : 1);
}

/** `$(VAR)` in a command or args, expanded by the kubelet from the container's env. */
export function expandK8s(value: string, env: Record<string, string>): string {
  return value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string) => {
    if (!(name in env)) throw new Error(`${whole} refers to no env variable of the container (it would be passed on literally)`);
    return env[name] as string;
  });
}

export function splitImage(image: string): { name: string; tag?: string } {
  const at = image.indexOf('@');
  const rest = at === -1 ? image : image.slice(0, at);
  const colon = rest.lastIndexOf(':');
  return colon > rest.lastIndexOf('/') ? { name: rest.slice(0, colon), tag: rest.slice(colon + 1) } : { name: rest };
}

export class Rendered {
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

  /**
   * The environment a container starts with: its envFrom ConfigMaps, then env (which wins); Secrets
   * as TEST_SECRETS, else a test token; with `pod`, fieldRef metadata.name and metadata.namespace,
   * and $(VAR) in a value expanded from the variables before it, as the kubelet does.
   */
  environment(container: Container, where: string, pod?: PodIdentity): Record<string, string> {
    const env: Record<string, string> = {};
    for (const from of container.envFrom ?? []) {
      if (!from.configMapRef) throw new Error(`${where}: envFrom other than configMapRef is not checked (${JSON.stringify(from)})`);
      const data = this.one<Manifest & { data?: Record<string, string> }>('ConfigMap', from.configMapRef.name).data ?? {};
      Object.assign(env, data);
    }
    for (const e of container.env ?? []) {
      if (e.value !== undefined) env[e.name] = pod ? expandK8s(e.value, env) : e.value;
      else if (pod && e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[e.name] = pod.name;
      else if (pod && e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') env[e.name] = pod.namespace;
      else if (e.valueFrom?.secretKeyRef)
        env[e.name] = TEST_SECRETS[`${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`] ?? TEST_TOKEN;
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
      if (from.configMapRef)
        names.push(...Object.keys(this.one<Manifest & { data?: Record<string, string> }>('ConfigMap', from.configMapRef.name).data ?? {}));
    }
    return names;
  }

  workloads(): Workload[] {
    return this.objects.filter((o) => WORKLOAD_KINDS.has(o.kind)) as Workload[];
  }
}

/** The containerPort a probe or Service names, by number or by the container port's name. */
export function resolvePort(container: Container, port: number | string | undefined, where: string): number {
  if (typeof port === 'number') {
    if (!(container.ports ?? []).some((p) => p.containerPort === port))
      throw new Error(`${where}: port ${port} is not a containerPort of ${container.name}`);
    return port;
  }
  const named = (container.ports ?? []).find((p) => p.name === port);
  if (!named) throw new Error(`${where}: ${container.name} has no port named ${String(port)}`);
  return named.containerPort;
}

/** A pod as NetworkPolicies see it. */
export interface Pod {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Record<string, string>;
}

/**
 * Whether `source` may open a TCP connection to `port` of `target` under these (ingress) policies;
 * `namespace`: where a policy that names none lives.
 */
export function allowed(policies: NetworkPolicy[], target: Pod, source: Pod, port: number, namespace: string): boolean {
  const selecting = policies.filter(
    (p) =>
      (p.metadata.namespace ?? namespace) === target.namespace &&
      selects(p.spec.podSelector, target.labels) &&
      (p.spec.policyTypes ?? ['Ingress']).includes('Ingress'),
  );
  if (selecting.length === 0) return true;
  const namespaceLabels = (ns: string) => ({ 'kubernetes.io/metadata.name': ns });
  const peerAdmits = (peer: { podSelector?: LabelSelector; namespaceSelector?: LabelSelector; ipBlock?: unknown }) => {
    if (peer.ipBlock !== undefined) return false; // pod traffic is not matched by ipBlock here
    const inNamespace = peer.namespaceSelector
      ? selects(peer.namespaceSelector, namespaceLabels(source.namespace))
      : source.namespace === target.namespace;
    return inNamespace && selects(peer.podSelector ?? {}, source.labels);
  };
  return selecting.some((p) =>
    (p.spec.ingress ?? []).some((rule) => {
      const portOk =
        (rule.ports ?? []).length === 0 ||
        (rule.ports ?? []).some((q) => {
          if (typeof q.port === 'string') throw new Error(`named port ${q.port} in ${p.metadata.name} is not evaluated here`);
          return (q.protocol ?? 'TCP') === 'TCP' && (q.port === undefined || q.port === port);
        });
      return portOk && ((rule.from ?? []).length === 0 || (rule.from ?? []).some(peerAdmits));
    }),
  );
}
