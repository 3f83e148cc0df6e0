/**
 * A tiny kustomize for the tests: renders the kustomizations under k8s/ without kubectl, so the
 * manifests can be checked on any machine. It implements only the subset k8s/ uses, with
 * kustomize v5's semantics (checked against `kubectl kustomize` v5.5), and throws on anything else:
 *
 * - `resources`: YAML files (several documents each) and directories holding a kustomization,
 *   rendered recursively; no remote bases, no generators, no components.
 * - `patches`: `path` to a strategic-merge patch file of one object, matched by its kind, group,
 *   name (and namespace) or by `target` (group, version, kind, name, namespace; a target that
 *   matches nothing is a no-op, like kustomize). Maps merge recursively, `null` deletes a key, and
 *   the keyed lists of built-in kinds merge by key: containers, initContainers, volumes,
 *   imagePullSecrets and env by `name`, container ports by `containerPort`, Service ports by
 *   `port`, volumeMounts by `mountPath`; merged items come in the patch's order, followed by the
 *   original items the patch did not name. Every other list (args, envFrom, volumeClaimTemplates,
 *   any list of a custom resource) is replaced. No JSON 6902 patches, no `$patch` directives.
 * - `namespace`: set on every namespaced object (not on cluster-scoped built-in kinds; a Namespace
 *   object is renamed to it). Kinds whose other fields kustomize rewrites too (RBAC bindings,
 *   webhook configurations, APIService, CRDs) are refused.
 * - `labels` (`pairs`, `includeSelectors`, `includeTemplates`) and `commonLabels` (= labels with
 *   includeSelectors): metadata.labels always; selectors and pod-template labels where kustomize
 *   puts them (Service, Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job,
 *   CronJob, PodDisruptionBudget, NetworkPolicy).
 * - `images` (`name`, `newName`, `newTag`, `digest`): every `containers`/`initContainers` image at
 *   any depth whose name (without tag or digest) equals `name`.
 * - `replicas` (`name`, `count`): spec.replicas of the Deployment, StatefulSet, ReplicaSet or
 *   ReplicationController of that name (an unmatched name is an error, like kustomize).
 *
 * Within one kustomization the steps run in kustomize's order: resources, patches, namespace,
 * labels, replicas, images. Objects come out in the order their resources list them.
 */
import { readFileSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

interface ManifestMetadata {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  [key: string]: unknown;
}

/** One rendered Kubernetes object. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: ManifestMetadata;
  [key: string]: unknown;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];
const SUPPORTED_FIELDS = new Set([
  'apiVersion',
  'kind',
  'resources',
  'namespace',
  'labels',
  'commonLabels',
  'images',
  'replicas',
  'patches',
]);

/** Renders the kustomization in `dir` (a directory holding kustomization.yaml). */
export function renderKustomization(dir: string): Manifest[] {
  return render(path.resolve(dir), []);
}

function render(dir: string, stack: readonly string[]): Manifest[] {
  if (stack.includes(dir)) throw new Error(`kustomize: cycle through ${dir}`);
  const file = kustomizationFile(dir);
  const k = parseSingle(file);
  for (const key of Object.keys(k)) {
    if (!SUPPORTED_FIELDS.has(key))
      throw new Error(
        `${file}: unsupported kustomization field "${key}" (test/support/kustomize.ts renders ${[...SUPPORTED_FIELDS].join(', ')})`,
      );
  }
  if (k['apiVersion'] !== undefined && k['apiVersion'] !== 'kustomize.config.k8s.io/v1beta1')
    throw new Error(`${file}: unsupported apiVersion ${JSON.stringify(k['apiVersion'])}`);
  if (k['kind'] !== undefined && k['kind'] !== 'Kustomization')
    throw new Error(`${file}: kind must be Kustomization, got ${JSON.stringify(k['kind'])}`);

  let objects: Manifest[] = [];
  for (const entry of list(k['resources'], file, 'resources')) {
    if (typeof entry !== 'string') throw new Error(`${file}: resources entries must be paths`);
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry) || entry.includes('?ref=') || /^(github\.com|gitlab\.com|bitbucket\.org)\//.test(entry)) {
      throw new Error(`${file}: remote resource "${entry}" is not supported`);
    }
    const target = path.resolve(dir, entry);
    const stat = statOrThrow(target, file);
    objects.push(...(stat.isDirectory() ? render(target, [...stack, dir]) : parseManifests(target)));
  }
  assertUnique(objects, file);

  for (const entry of list(k['patches'], file, 'patches')) objects = applyPatch(objects, entry, dir, file);
  if (k['namespace'] !== undefined) applyNamespace(objects, k['namespace'], file);
  if (k['commonLabels'] !== undefined)
    applyLabels(objects, stringMap(k['commonLabels'], file, 'commonLabels'), { selectors: true, templates: true });
  for (const entry of list(k['labels'], file, 'labels')) {
    const spec = object(entry, file, 'labels entry');
    only(spec, ['pairs', 'includeSelectors', 'includeTemplates'], file, 'labels entry');
    const selectors = bool(spec['includeSelectors'], file, 'includeSelectors');
    applyLabels(objects, stringMap(spec['pairs'], file, 'labels pairs'), {
      selectors,
      templates: selectors || bool(spec['includeTemplates'], file, 'includeTemplates'),
    });
  }
  for (const entry of list(k['replicas'], file, 'replicas')) applyReplicas(objects, entry, file);
  for (const entry of list(k['images'], file, 'images')) applyImage(objects, entry, file);
  return objects;
}

// ------------------------------------------------------------------------------- reading files

function kustomizationFile(dir: string): string {
  for (const name of KUSTOMIZATION_FILES) {
    const candidate = path.join(dir, name);
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // try the next name
    }
  }
  throw new Error(`kustomize: no kustomization.yaml in ${dir}`);
}

function statOrThrow(target: string, file: string): Stats {
  try {
    return statSync(target);
  } catch {
    throw new Error(`${file}: resource ${target} does not exist`);
  }
}

function parseDocuments(file: string): Json[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  if (!Array.isArray(docs)) return [];
  const out: Json[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value = doc.toJS() as Json | undefined;
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

function parseSingle(file: string): JsonObject {
  const docs = parseDocuments(file);
  if (docs.length !== 1) throw new Error(`${file}: expected one YAML document, found ${docs.length}`);
  return object(docs[0] ?? null, file, 'document');
}

function parseManifests(file: string): Manifest[] {
  return parseDocuments(file).map((doc) => {
    if (Array.isArray(doc)) throw new Error(`${file}: a resource file holds objects, not a list (JSON 6902 patches are not supported)`);
    const obj = object(doc, file, 'resource');
    if (obj['kind'] === 'List') throw new Error(`${file}: kind List is not supported`);
    return asManifest(obj, file);
  });
}

function asManifest(obj: JsonObject, file: string): Manifest {
  const metadata = obj['metadata'];
  if (
    typeof obj['apiVersion'] !== 'string' ||
    typeof obj['kind'] !== 'string' ||
    !isObject(metadata) ||
    typeof metadata['name'] !== 'string'
  ) {
    throw new Error(`${file}: every object needs apiVersion, kind and metadata.name`);
  }
  return obj as unknown as Manifest;
}

// ------------------------------------------------------------------------------- identity

function group(apiVersion: string): string {
  return apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '';
}

function version(apiVersion: string): string {
  return apiVersion.includes('/') ? (apiVersion.split('/')[1] ?? '') : apiVersion;
}

function id(o: Manifest): string {
  return `${group(o.apiVersion)}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

function assertUnique(objects: readonly Manifest[], file: string): void {
  const seen = new Set<string>();
  for (const o of objects) {
    const key = id(o);
    if (seen.has(key)) throw new Error(`${file}: ${o.kind} ${o.metadata.name} is defined twice`);
    seen.add(key);
  }
}

// ------------------------------------------------------------------------------- patches

function applyPatch(objects: Manifest[], entry: Json, dir: string, file: string): Manifest[] {
  const spec = object(entry, file, 'patches entry');
  only(spec, ['path', 'target'], file, 'patches entry (only path and target are supported: no inline patch, no options)');
  if (typeof spec['path'] !== 'string') throw new Error(`${file}: a patches entry needs a path`);
  const patchFile = path.resolve(dir, spec['path']);
  const docs = parseDocuments(patchFile);
  if (docs.length !== 1 || Array.isArray(docs[0]))
    throw new Error(`${patchFile}: a patch file holds one strategic-merge patch object (JSON 6902 patches are not supported)`);
  const patch = asManifest(object(docs[0] ?? null, patchFile, 'patch'), patchFile);

  let matches: (o: Manifest) => boolean;
  if (spec['target'] !== undefined) {
    const target = object(spec['target'], file, 'patch target');
    only(target, ['group', 'version', 'kind', 'name', 'namespace'], file, 'patch target (no labelSelector or annotationSelector)');
    const want = (key: string, actual: string | undefined) => target[key] === undefined || target[key] === (actual ?? '');
    matches = (o) =>
      want('group', group(o.apiVersion)) &&
      want('version', version(o.apiVersion)) &&
      want('kind', o.kind) &&
      want('name', o.metadata.name) &&
      want('namespace', o.metadata.namespace);
  } else {
    matches = (o) =>
      o.kind === patch.kind &&
      group(o.apiVersion) === group(patch.apiVersion) &&
      o.metadata.name === patch.metadata.name &&
      (o.metadata.namespace ?? '') === (patch.metadata.namespace ?? '');
    if (!objects.some(matches)) throw new Error(`${patchFile}: no resource matches the patch for ${patch.kind} ${patch.metadata.name}`);
  }

  // What identifies the object is not patched: kind, apiVersion, name and namespace stay.
  const body = structuredClone(patch) as unknown as JsonObject;
  delete body['apiVersion'];
  delete body['kind'];
  const meta = body['metadata'] as JsonObject;
  delete meta['name'];
  delete meta['namespace'];
  return objects.map((o) =>
    matches(o) ? (mergeObject(o as unknown as JsonObject, body, schemaFor(o), patchFile) as unknown as Manifest) : o,
  );
}

/** Where the built-in kinds have keyed lists: `key` merges a list by that field of its items. */
interface Schema {
  readonly fields?: Readonly<Record<string, Schema>>;
  readonly key?: string;
  readonly items?: Schema;
}

const CONTAINER: Schema = {
  fields: {
    ports: { key: 'containerPort' },
    env: { key: 'name' },
    volumeMounts: { key: 'mountPath' },
    volumeDevices: { key: 'devicePath' },
  },
};
const POD_SPEC: Schema = {
  fields: {
    containers: { key: 'name', items: CONTAINER },
    initContainers: { key: 'name', items: CONTAINER },
    ephemeralContainers: { key: 'name', items: CONTAINER },
    volumes: { key: 'name' },
    imagePullSecrets: { key: 'name' },
    hostAliases: { key: 'ip' },
    topologySpreadConstraints: { key: 'topologyKey' },
  },
};
const POD_TEMPLATE: Schema = { fields: { spec: POD_SPEC } };
const WORKLOAD: Schema = { fields: { spec: { fields: { template: POD_TEMPLATE } } } };
const CRONJOB: Schema = { fields: { spec: { fields: { jobTemplate: { fields: { spec: { fields: { template: POD_TEMPLATE } } } } } } } };
const POD: Schema = { fields: { spec: POD_SPEC } };
const SERVICE: Schema = { fields: { spec: { fields: { ports: { key: 'port' } } } } };

function schemaFor(o: Manifest): Schema {
  const g = group(o.apiVersion);
  if (g === 'apps' && ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet'].includes(o.kind)) return WORKLOAD;
  if (g === 'batch' && o.kind === 'Job') return WORKLOAD;
  if (g === 'batch' && o.kind === 'CronJob') return CRONJOB;
  if (g === '' && o.kind === 'ReplicationController') return WORKLOAD;
  if (g === '' && o.kind === 'Pod') return POD;
  if (g === '' && o.kind === 'Service') return SERVICE;
  return {}; // custom resources and the rest: maps merge, lists are replaced
}

function mergeObject(original: JsonObject, patch: JsonObject, schema: Schema, file: string): JsonObject {
  const out: JsonObject = { ...original };
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) throw new Error(`${file}: patch directive "${key}" is not supported`);
    if (value === null) {
      delete out[key];
      continue;
    }
    out[key] = mergeValue(original[key], value, schema.fields?.[key] ?? {}, file);
  }
  return out;
}

function mergeValue(original: Json | undefined, patch: Json, schema: Schema, file: string): Json {
  if (isObject(patch) && isObject(original)) return mergeObject(original, patch, schema, file);
  if (Array.isArray(patch) && Array.isArray(original) && schema.key)
    return mergeKeyedList(original, patch, schema.key, schema.items ?? {}, file);
  return withoutNulls(patch, file);
}

function mergeKeyedList(original: Json[], patch: Json[], key: string, itemSchema: Schema, file: string): Json[] {
  const keyOf = (item: Json): Json | undefined => (isObject(item) ? item[key] : undefined);
  const used = new Set<number>();
  const out: Json[] = patch.map((item) => {
    if (!isObject(item) || item[key] === undefined) throw new Error(`${file}: every item of a list merged by "${key}" needs a ${key}`);
    const at = original.findIndex((o, i) => !used.has(i) && keyOf(o) === item[key]);
    if (at < 0) return withoutNulls(item, file);
    used.add(at);
    return mergeObject(original[at] as JsonObject, item, itemSchema, file);
  });
  original.forEach((item, i) => {
    if (!used.has(i)) out.push(item);
  });
  return out;
}

/** A value the patch adds: its null fields mean "absent", like in a strategic merge. */
function withoutNulls(value: Json, file: string): Json {
  if (Array.isArray(value)) return value.map((v) => withoutNulls(v, file));
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('$')) throw new Error(`${file}: patch directive "${k}" is not supported`);
    if (v !== null) out[k] = withoutNulls(v, file);
  }
  return out;
}

// ------------------------------------------------------------------------------- namespace

/** Built-in kinds that are not namespaced (kustomize treats unknown kinds as namespaced). */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'Node',
  'PersistentVolume',
  'StorageClass',
  'CSIDriver',
  'CSINode',
  'VolumeAttachment',
  'ClusterRole',
  'PriorityClass',
  'RuntimeClass',
  'IngressClass',
  'CertificateSigningRequest',
  'ComponentStatus',
  'FlowSchema',
  'PriorityLevelConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);
/** Kinds whose fields beyond metadata.namespace kustomize's namespace step rewrites: not implemented. */
const NAMESPACE_SPECIAL = new Set([
  'RoleBinding',
  'ClusterRoleBinding',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
  'APIService',
  'CustomResourceDefinition',
]);

function applyNamespace(objects: Manifest[], namespace: Json, file: string): void {
  if (typeof namespace !== 'string' || namespace === '') throw new Error(`${file}: namespace must be a name`);
  for (const o of objects) {
    if (NAMESPACE_SPECIAL.has(o.kind)) throw new Error(`${file}: namespace with a ${o.kind} is not supported by test/support/kustomize.ts`);
    if (o.kind === 'Namespace' && o.apiVersion === 'v1') o.metadata.name = namespace;
    else if (!CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = namespace;
  }
}

// ------------------------------------------------------------------------------- labels

/** A path into an object; "[]" steps into every item of a list. `create` makes missing maps. */
interface FieldSpec {
  readonly path: readonly string[];
  readonly create: boolean;
}

const field = (p: string, create: boolean): FieldSpec => ({ path: p.split('/'), create });
const AFFINITY = [
  'spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/[]/podAffinityTerm/labelSelector/matchLabels',
  'spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/[]/labelSelector/matchLabels',
  'spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/[]/podAffinityTerm/labelSelector/matchLabels',
  'spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/[]/labelSelector/matchLabels',
  'spec/template/spec/topologySpreadConstraints/[]/labelSelector/matchLabels',
].map((p) => field(p, false));

/** kustomize's pod-template label fields (includeTemplates, and with includeSelectors). */
function templateSpecs(o: Manifest): FieldSpec[] {
  const g = group(o.apiVersion);
  if (
    (g === '' && o.kind === 'ReplicationController') ||
    ['Deployment', 'ReplicaSet', 'DaemonSet'].includes(o.kind) ||
    (g === 'batch' && o.kind === 'Job')
  ) {
    return [field('spec/template/metadata/labels', true)];
  }
  if (g === 'apps' && o.kind === 'StatefulSet')
    return [field('spec/template/metadata/labels', true), field('spec/volumeClaimTemplates/[]/metadata/labels', true)];
  if (g === 'batch' && o.kind === 'CronJob')
    return [field('spec/jobTemplate/metadata/labels', true), field('spec/jobTemplate/spec/template/metadata/labels', true)];
  return [];
}

/** kustomize's selector fields (includeSelectors). */
function selectorSpecs(o: Manifest): FieldSpec[] {
  const g = group(o.apiVersion);
  if (g === '' && (o.kind === 'Service' || o.kind === 'ReplicationController')) return [field('spec/selector', true)];
  if (o.kind === 'Deployment') return [field('spec/selector/matchLabels', true), ...(g === 'apps' ? AFFINITY : [])];
  if (o.kind === 'ReplicaSet' || o.kind === 'DaemonSet') return [field('spec/selector/matchLabels', true)];
  if (g === 'apps' && o.kind === 'StatefulSet') return [field('spec/selector/matchLabels', true), ...AFFINITY];
  if (g === 'batch' && o.kind === 'Job') return [field('spec/selector/matchLabels', false)];
  if (g === 'batch' && o.kind === 'CronJob') return [field('spec/jobTemplate/spec/selector/matchLabels', false)];
  if (g === 'policy' && o.kind === 'PodDisruptionBudget') return [field('spec/selector/matchLabels', false)];
  if (g === 'networking.k8s.io' && o.kind === 'NetworkPolicy') {
    return [
      field('spec/podSelector/matchLabels', false),
      field('spec/ingress/[]/from/[]/podSelector/matchLabels', false),
      field('spec/egress/[]/to/[]/podSelector/matchLabels', false),
    ];
  }
  return [];
}

function applyLabels(objects: Manifest[], pairs: Record<string, string>, scope: { selectors: boolean; templates: boolean }): void {
  for (const o of objects) {
    const specs = [
      field('metadata/labels', true),
      ...(scope.templates ? templateSpecs(o) : []),
      ...(scope.selectors ? selectorSpecs(o) : []),
    ];
    for (const s of specs) forEachField(o as unknown as JsonObject, s.path, s.create, (map) => Object.assign(map, pairs));
  }
}

function forEachField(node: JsonObject, steps: readonly string[], create: boolean, visit: (map: JsonObject) => void): void {
  const [step, ...rest] = steps;
  if (step === undefined) {
    visit(node);
    return;
  }
  if (step === '[]') throw new Error('kustomize: a field path cannot start with []');
  let next = node[step];
  if (rest[0] === '[]') {
    if (Array.isArray(next)) for (const item of next) if (isObject(item)) forEachField(item, rest.slice(1), create, visit);
    return;
  }
  if (next === undefined || next === null) {
    if (!create) return;
    next = {};
    node[step] = next;
  }
  if (isObject(next)) forEachField(next, rest, create, visit);
}

// ------------------------------------------------------------------------------- replicas

const SCALABLE = new Set(['Deployment', 'StatefulSet', 'ReplicaSet', 'ReplicationController']);

function applyReplicas(objects: Manifest[], entry: Json, file: string): void {
  const r = object(entry, file, 'replicas entry');
  only(r, ['name', 'count'], file, 'replicas entry');
  const count = r['count'];
  if (typeof r['name'] !== 'string' || typeof count !== 'number' || !Number.isInteger(count) || count < 0)
    throw new Error(`${file}: replicas entries need a name and a whole count`);
  const targets = objects.filter((o) => SCALABLE.has(o.kind) && o.metadata.name === r['name']);
  if (targets.length === 0)
    throw new Error(`${file}: replicas: no Deployment, StatefulSet, ReplicaSet or ReplicationController named ${r['name']}`);
  for (const o of targets) {
    const spec = isObject(o['spec'] as Json) ? (o['spec'] as JsonObject) : {};
    spec['replicas'] = count;
    o['spec'] = spec;
  }
}

// ------------------------------------------------------------------------------- images

/** name (registry/repository, a registry port included), tag and digest of an image reference. */
function splitImage(image: string): { name: string; tag?: string; digest?: string } {
  let rest = image;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) return { name: rest.slice(0, colon), tag: rest.slice(colon + 1), ...(digest ? { digest } : {}) };
  return { name: rest, ...(digest ? { digest } : {}) };
}

function applyImage(objects: Manifest[], entry: Json, file: string): void {
  const img = object(entry, file, 'images entry');
  only(img, ['name', 'newName', 'newTag', 'digest'], file, 'images entry');
  for (const key of ['name', 'newName', 'newTag', 'digest']) {
    if (img[key] !== undefined && typeof img[key] !== 'string')
      throw new Error(`${file}: images ${key} must be a string (quote tags such as "1.0")`);
  }
  const name = img['name'] as string | undefined;
  if (!name) throw new Error(`${file}: an images entry needs a name`);
  const rewrite = (image: string): string => {
    const ref = splitImage(image);
    if (ref.name !== name) return image;
    const newName = (img['newName'] as string | undefined) ?? ref.name;
    if (img['digest'] !== undefined) return `${newName}@${img['digest'] as string}`;
    if (img['newTag'] !== undefined) return `${newName}:${img['newTag'] as string}`;
    return `${newName}${ref.tag !== undefined ? `:${ref.tag}` : ''}${ref.digest !== undefined ? `@${ref.digest}` : ''}`;
  };
  const walk = (node: Json): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (isObject(node)) {
      for (const [key, value] of Object.entries(node)) {
        if ((key === 'containers' || key === 'initContainers') && Array.isArray(value)) {
          for (const c of value) if (isObject(c) && typeof c['image'] === 'string') c['image'] = rewrite(c['image']);
        }
        walk(value);
      }
    }
  };
  for (const o of objects) walk(o as unknown as JsonObject);
}

// ------------------------------------------------------------------------------- checks

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function object(value: Json, file: string, what: string): JsonObject {
  if (!isObject(value)) throw new Error(`${file}: ${what} must be a map`);
  return value;
}

function list(value: Json | undefined, file: string, what: string): Json[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new Error(`${file}: ${what} must be a list`);
  return value;
}

function only(value: JsonObject, allowed: readonly string[], file: string, what: string): void {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) throw new Error(`${file}: unsupported field "${key}" in ${what}`);
}

function bool(value: Json | undefined, file: string, what: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new Error(`${file}: ${what} must be true or false`);
  return value;
}

function stringMap(value: Json | undefined, file: string, what: string): Record<string, string> {
  const map = object(value ?? null, file, what);
  for (const [k, v] of Object.entries(map))
    if (typeof v !== 'string') throw new Error(`${file}: ${what}: the value of ${k} must be a string (quote it)`);
  return map as Record<string, string>;
}
