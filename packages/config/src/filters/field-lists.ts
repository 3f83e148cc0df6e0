/**
 * dropFields and keepFields (docs/filters.md): what of a call's properties, traits and context a
 * destination is sent. The call is never changed: only the objects on the way to a changed field
 * are copied, everything else is shared, and a call nothing changes is returned as it is.
 * Paths name object fields; a path through something else (an array, a string) is left alone.
 *
 * An object is copied at most once per call however many rules change it: the copies made are
 * `owned`, and a later rule changes an owned copy in place. Copying costs ~0.3 µs a field (a 32 KB
 * call's properties can hold 4,400), so copying anew per rule let 20 rules cost ~30 ms.
 */
import { splitPath } from './call-path.js';

// Built-ins used per call are read once: a global lookup inside a hot loop is slow in a vm context
// (jest's sandbox, where the hostile-input test measures these loops), and costs nothing to avoid.
const { isArray } = Array;
const { hasOwn, keys, defineProperty } = Object;

/** The call fields a field list may touch; the others identify the call to its receiver. */
export const SHAPED_ROOTS: readonly string[] = ['properties', 'traits', 'context'];

/** `owned`: the copies this call's shaping made so far, which a shape may change in place. */
export type Shape = (call: object, owned?: Set<object>) => object;

/** The names a list reaches under one object: a leaf takes the field whole, a branch goes on. */
type PathTree = Map<string, PathTree | 'whole'>;

/** The listed paths as a tree; a path also listed whole (`properties` beside `properties.plan`) wins. */
function treeOf(paths: readonly string[]): PathTree {
  const root: PathTree = new Map();
  for (const path of paths) {
    const names = splitPath(path);
    let tree = root;
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const existing = tree.get(name);
      if (existing === 'whole') break;
      if (i === names.length - 1) tree.set(name, 'whole');
      else if (existing) tree = existing;
      else tree.set(name, (tree = new Map()));
    }
  }
  return root;
}

/** Removes each listed path (`properties` removes the whole object). */
export function compileDropFields(paths: readonly string[]): Shape {
  const tree = treeOf(paths);
  return (call, owned) => without(call, tree, owned) as object;
}

/**
 * Within properties, traits and context keeps only the listed paths (and the objects on the way
 * to them, even when the leaf is absent); of those three, an object none of whose paths is listed
 * is removed. The call's other fields are always kept.
 */
export function compileKeepFields(paths: readonly string[]): Shape {
  const tree = treeOf(paths);
  const unlisted = SHAPED_ROOTS.filter((root) => !tree.has(root));
  const listed = [...tree].filter(([root]) => SHAPED_ROOTS.includes(root));
  return (call, owned) => {
    const source = call as Record<string, unknown>;
    let changes: Changes | undefined;
    for (const root of unlisted) if (hasOwn(source, root)) (changes ??= new Map()).set(root, REMOVED);
    for (const [root, sub] of listed) {
      if (sub === 'whole' || !hasOwn(source, root)) continue;
      const value = source[root];
      const kept = only(value, sub, owned);
      if (kept !== value) (changes ??= new Map()).set(root, kept);
    }
    return changes ? changed(source, changes, owned) : call;
  };
}

const REMOVED = Symbol('removed');
type Changes = Map<string, unknown>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !isArray(value);
}

function without(value: unknown, tree: PathTree, owned: Set<object> | undefined): unknown {
  if (!isRecord(value)) return value;
  let changes: Changes | undefined;
  for (const [name, sub] of tree) {
    if (!hasOwn(value, name)) continue;
    if (sub === 'whole') {
      (changes ??= new Map()).set(name, REMOVED);
      continue;
    }
    const child = value[name];
    const next = without(child, sub, owned);
    if (next !== child) (changes ??= new Map()).set(name, next);
  }
  return changes ? changed(value, changes, owned) : value;
}

function only(value: unknown, tree: PathTree, owned: Set<object> | undefined): unknown {
  if (!isRecord(value)) return value;
  let changes: Changes | undefined;
  for (const name of keys(value)) {
    const sub = tree.get(name);
    if (sub === 'whole') continue;
    const child = value[name];
    const next = sub === undefined ? REMOVED : only(child, sub, owned);
    if (next !== child) (changes ??= new Map()).set(name, next);
  }
  return changes ? changed(value, changes, owned) : value;
}

/** `value` with the changes made: in place when it is a copy this call's shaping owns, else in a new (owned) copy. */
function changed(value: Record<string, unknown>, changes: Changes, owned: Set<object> | undefined): Record<string, unknown> {
  if (owned?.has(value)) {
    for (const [name, next] of changes) {
      if (next === REMOVED) delete value[name];
      else setField(value, name, next);
    }
    return value;
  }
  const copy = rebuilt(value, changes);
  owned?.add(copy);
  return copy;
}

// `object[name] = value` with name `__proto__` would set the prototype instead of the field.
function setField(object: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__') defineProperty(object, name, { value, writable: true, enumerable: true, configurable: true });
  else object[name] = value;
}

/**
 * A copy of `value` with the changes made, its fields in their order. Built anew rather than
 * copied and deleted from, so the copy stays a fast object for V8.
 */
function rebuilt(value: Record<string, unknown>, changes: Changes): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const name of keys(value)) {
    const next = changes.has(name) ? changes.get(name) : value[name];
    if (next !== REMOVED) setField(copy, name, next);
  }
  return copy;
}
