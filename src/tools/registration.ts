/**
 * Registration: a tool definition snapshotted into the deep-frozen record the registry
 * stores (each field read once, `execute` bound to its definition, `annotations` copied
 * as lossless JSON), with the parameters step the registry supplies.
 */
import { describeValue } from '../context/token.js';
import { NotLosslessJsonError, snapshotJson, type JsonObject } from '../util/lossless-json.js';
import { quotedFieldError } from '../util/read-field.js';
import type { Tool } from './types.js';

/** @internal The parameters step of `snapshotDefinition`: a snapshot, then (last) the interning. */
export interface ParameterSteps<S> {
  readonly snapshot: (toolName: string, raw: unknown, target: string) => S;
  readonly intern: (toolName: string, snap: S) => JsonObject;
}

/**
 * @internal Snapshots a definition into a deep-frozen stored tool; a Standard Schema
 * `parameters` is converted to JSON Schema with `target` (the registry's default dialect).
 */
export function snapshotDefinition<S>(def: unknown, target: string, steps: ParameterSteps<S>): Tool {
  if (def === null || typeof def !== 'object') {
    throw new TypeError(`Tools.register(definition): definition must be an object { name, description, parameters, execute }, got ${describeValue(def)}.`);
  }
  // Each field read once, in this order; one try for all six (a throwing getter names its field).
  const d = def as Record<string, unknown>;
  let field = 'name';
  let name: unknown, description: unknown, parameters: unknown, execute: unknown, timeoutMs: unknown, annotations: unknown;
  try {
    name = d.name;
    field = 'description';
    description = d.description;
    field = 'parameters';
    parameters = d.parameters;
    field = 'execute';
    execute = d.execute;
    field = 'timeoutMs';
    timeoutMs = d.timeoutMs;
    field = 'annotations';
    annotations = d.annotations;
  } catch (err) {
    throw quotedFieldError(err, field, 'Tools.register');
  }
  if (typeof name !== 'string' || name.length === 0) {
    throw new TypeError(`Tools.register(definition): name must be a non-empty string, got ${describeValue(name)}.`);
  }
  if (typeof description !== 'string') {
    throw new TypeError(`Tools.register(${name}): description must be a string, got ${describeValue(description)}.`);
  }
  if (typeof execute !== 'function') {
    throw new TypeError(`Tools.register(${name}): execute must be a function, got ${describeValue(execute)}.`);
  }
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > 2_147_483_647)) {
    throw new TypeError(`Tools.register(${name}): timeoutMs must be a positive number of milliseconds, got ${describeValue(timeoutMs)}.`);
  }
  const snap = steps.snapshot(name, parameters, target);
  const binding = bindingOf(def, execute as (...a: unknown[]) => unknown);
  const annotationsSnap = annotations === undefined ? undefined : snapshotAnnotations(name, annotations);
  // Last: nothing after it can throw, so a refused definition holds no validator reference.
  const params = steps.intern(name, snap);
  // The same definition registered again, unchanged (every agent registering the same
  // tools): the record made last time is equal field for field and frozen, so it is the
  // record again (see `bindingOf`). With annotations, a new record (their snapshot is new).
  const last = binding.tool;
  if (
    last !== undefined &&
    annotationsSnap === undefined &&
    last.annotations === undefined &&
    last.name === name &&
    last.description === description &&
    last.parameters === params &&
    last.timeoutMs === timeoutMs
  ) {
    return last;
  }
  const tool: { -readonly [K in keyof Tool]: Tool[K] } = { name, description, parameters: params, execute: binding.bound };
  if (timeoutMs !== undefined) tool.timeoutMs = timeoutMs as number;
  if (annotationsSnap !== undefined) tool.annotations = annotationsSnap;
  Object.freeze(tool);
  binding.tool = tool;
  return tool;
}

/** What a definition object was last registered as: its `execute`, bound, and the stored record made. */
interface Binding {
  readonly execute: (...a: unknown[]) => unknown;
  readonly bound: (...a: unknown[]) => unknown;
  /** The last record made with this binding (reused while every other field is equal). */
  tool: Tool | undefined;
}

/**
 * The binding of each definition object registered, weakly (a definition is never kept
 * alive by it, nor is its schema). A `WeakMap` keeps its grown table after its keys are
 * gone (10,000 concurrent agents with their own definitions left +1.8 MB), so it is
 * replaced by an empty one every {@link BOUND_RENEW} new bindings: a shared definition is
 * then bound once more.
 */
let boundByDefinition = new WeakMap<object, Binding>();
let boundSinceRenew = 0;
const BOUND_RENEW = 1024;

/**
 * `execute` bound to `def`, frozen. The same definition object registered again with the
 * same `execute` (every agent registering the same tools) gets the same bound function,
 * and (when every other field is equal too) the same stored record: both are immutable,
 * so sharing them is indistinguishable from making them anew except by identity, and
 * nothing in polestar takes a record's identity for its registration's (a call is tied to
 * its registration, see `CallState.registration`). Binding and freezing are most of a
 * registration's own cost after the schema check.
 */
function bindingOf(def: object, execute: (...a: unknown[]) => unknown): Binding {
  const known = boundByDefinition.get(def);
  if (known !== undefined && known.execute === execute) return known;
  const binding: Binding = { execute, bound: Object.freeze(execute.bind(def)), tool: undefined };
  if (++boundSinceRenew > BOUND_RENEW) {
    boundByDefinition = new WeakMap();
    boundSinceRenew = 0;
  }
  boundByDefinition.set(def, binding);
  return binding;
}

/** Snapshots a definition's `annotations`: a lossless JSON object, deep-frozen. */
function snapshotAnnotations(name: string, annotations: unknown): JsonObject {
  let snap;
  try {
    snap = snapshotJson(annotations, `Tools.register(${name}): tool annotations`, 'annotations');
  } catch (err) {
    if (err instanceof NotLosslessJsonError) throw err;
    throw new TypeError(`Tools.register(${name}): annotations could not be read: ${describeValue(err)}.`);
  }
  if (snap === null || typeof snap !== 'object' || Array.isArray(snap)) {
    throw new TypeError(`Tools.register(${name}): annotations must be a JSON object such as { readOnlyHint: true }, got ${describeValue(annotations)}.`);
  }
  return snap as JsonObject;
}
