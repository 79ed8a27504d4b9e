/**
 * Serializers say which locals of a durable session persist: each maps
 * a token to a stable key, a version, the context whose own local it snapshots, the two
 * functions between the value and lossless JSON, and optionally `restore`, which puts a
 * stored value back into a live instance in place.
 */
import type { SystemContext } from '../context/system-context.js';
import { describeTokenCandidate, describeValue, errorText, isToken, nameOf, type Token } from '../context/token.js';
import { snapshotJson, thawJson, type JsonValue } from '../util/lossless-json.js';
import { SessionError } from './errors.js';
import type { PersistedLocal } from './store/contract.js';

/**
 * How one local persists. `key` is a stable string naming the local in the store (never a
 * class name: minifiers rename classes); `version` is a positive integer to bump when the
 * serialized shape changes; `deserialize(data, version)` receives the version that wrote
 * `data` (never a newer one) and migrates older shapes. `data` is a fresh, mutable copy
 * made for that one call: the value may keep it (and its arrays and objects) as its own.
 *
 * On `resume` the persisted locals are restored before the agent's `setup` runs, so a
 * local `setup` reads (`agentCtx.getMut(Memory)`) and hands to a tool is the persisted one.
 * After a failed turn and after `rollback`, a local whose serializer has
 * {@link LocalSerializer.restore | restore} is restored in place (the same object, so a
 * reference captured in `setup` stays the persisted one); without `restore` it is replaced
 * by a new value from `deserialize`, and code that captured the old instance keeps
 * writing to an object that is no longer persisted. Give every agent-scope local a
 * `restore`, or have tools read the local when they are called (`ctx.getMut(Memory)`).
 *
 * @example
 * ```ts
 * import assert from 'node:assert/strict';
 * import { AgentsPlugin, MemorySessionStore, Server, Sessions, SessionsPlugin, type LocalSerializer } from 'polestar-di';
 *
 * class Memory {
 *   facts: string[] = [];
 * }
 * const memorySerializer: LocalSerializer<Memory> = {
 *   key: 'app.memory',
 *   version: 1,
 *   scope: 'agent',
 *   serialize: (m) => m.facts,
 *   deserialize: (data) => Object.assign(new Memory(), { facts: [...(data as string[])] }),
 * };
 *
 * const store = new MemorySessionStore();
 * for (const step of ['write', 'read']) {
 *   const server = new Server();
 *   server.registerLocal(Memory, { per: 'agent' });
 *   server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, serializers: [[Memory, memorySerializer]] }));
 *   await server.finish();
 *   const sessions = server.createContext().get(Sessions);
 *   if (step === 'write') {
 *     const s = await sessions.create({ agentId: 'a', sessionId: 's' });
 *     await s.turn((turnCtx) => void turnCtx.get(Memory).facts.push('likes tea'));
 *   } else {
 *     const s = await sessions.resume({ agentId: 'a', sessionId: 's' });
 *     assert.deepEqual(s.agent.ctx.get(Memory).facts, ['likes tea']); // restored, replacing the per-agent instance
 *   }
 *   await server.dispose();
 * }
 * ```
 *
 * @example A serializer with restore
 * `setup` captures the local once, and after a failed turn the captured instance is the one
 * put back.
 * ```ts
 * import assert from 'node:assert/strict';
 * import { AgentsPlugin, Server, Sessions, SessionsPlugin, type LocalSerializer } from 'polestar-di';
 *
 * class Notes {
 *   items: string[] = [];
 * }
 * const notesSerializer: LocalSerializer<Notes> = {
 *   key: 'app.notes',
 *   version: 1,
 *   scope: 'agent',
 *   serialize: (n) => n.items,
 *   deserialize: (data) => Object.assign(new Notes(), { items: data as string[] }), // data is a fresh copy: keep it
 *   restore: (target, data) => void (target.items = data as string[]),
 * };
 *
 * const server = new Server();
 * server.registerLocal(Notes, { per: 'agent' });
 * server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ serializers: [[Notes, notesSerializer]] }));
 * await server.finish();
 * let notes: Notes | undefined;
 * const s = await server.createContext().get(Sessions).create({
 *   agentId: 'a',
 *   sessionId: 's',
 *   setup: (agentCtx) => void (notes = agentCtx.getMut(Notes)),
 * });
 * await s.turn(() => void notes?.items.push('kept'));
 * await s.turn(() => {
 *   notes?.items.push('lost');
 *   throw new Error('the model call failed');
 * }).catch(() => undefined);
 * assert.equal(s.agent.ctx.get(Notes), notes); // restored in place: still the captured instance
 * assert.deepEqual(notes?.items, ['kept']);
 * await server.dispose();
 * ```
 */
export interface LocalSerializer<T = unknown> {
  /** The stable key of the local in the store (a non-empty string, unique among the serializers). */
  readonly key: string;
  /** The version of the serialized shape: a positive integer. */
  readonly version: number;
  /** Whose own local it snapshots: the session context's or the agent context's. */
  readonly scope: 'session' | 'agent';
  /** Turns the value into lossless JSON (checked; anything else is `SERIALIZE_FAILED`). */
  serialize(value: T): JsonValue;
  /**
   * Rebuilds a value from what `serialize` wrote with `version` (may migrate older
   * versions; throw for garbage). `data` is a fresh, mutable copy the value may keep.
   */
  deserialize(data: JsonValue, version: number): T;
  /**
   * Optional: puts what `serialize` wrote with `version` back into the live instance
   * `target`, in place (same migration rules as `deserialize`; throw for garbage; `data` is
   * a fresh, mutable copy it may keep). With it, a failed turn and `rollback` restore the
   * live instance instead of replacing it, so a reference captured in `setup` stays the
   * persisted one; and on `resume`, an instance `setup` inserts for this token is restored
   * in place and kept (without `restore` that insert is refused with a `TypeError`).
   * Used only when the live local is an object; otherwise `deserialize` replaces it.
   */
  restore?(target: T, data: JsonValue, version: number): void;
}

/** One entry of `SessionsPlugin({ serializers })`: the token and its serializer. */
 
export type SerializerEntry<T = any> = readonly [token: Token<T>, serializer: LocalSerializer<T>];

/** @internal A checked serializer with its token. */
export interface CheckedSerializer {
  readonly token: Token;
  readonly key: string;
  readonly version: number;
  readonly scope: 'session' | 'agent';
  readonly serialize: (value: unknown) => JsonValue;
  readonly deserialize: (data: JsonValue, version: number) => unknown;
  /** In-place restore, when the serializer has one. */
  readonly restore: ((target: object, data: JsonValue, version: number) => void) | undefined;
}

/** @internal The serializers of one plugin, by key and in the order given. */
export interface SerializerSet {
  readonly list: readonly CheckedSerializer[];
  readonly byKey: ReadonlyMap<string, CheckedSerializer>;
}

/** @internal Reads and validates `serializers` once (each field read once). */
export function checkSerializers(value: unknown): SerializerSet {
  const where = 'new SessionsPlugin({ serializers })';
  const list: CheckedSerializer[] = [];
  const byKey = new Map<string, CheckedSerializer>();
  if (value === undefined) return { list, byKey };
  if (value === null || typeof value !== 'object' || !(Symbol.iterator in value)) {
    throw new TypeError(`${where}: serializers must be an array of [token, { key, version, scope, serialize, deserialize, restore? }] pairs, got ${describeValue(value)}.`);
  }
  const tokens = new Set<unknown>();
  let i = 0;
  for (const entry of value as Iterable<unknown>) {
    const at = `${where}: serializers[${i++}]`;
    if (!Array.isArray(entry) || entry.length !== 2) {
      throw new TypeError(`${at} must be a pair [token, serializer], got ${describeValue(entry)}.`);
    }
    const [token, s] = entry as [unknown, unknown];
    if (!isToken(token)) {
      throw new TypeError(`${at}: the token must be a class or a token() symbol, got ${describeTokenCandidate(token)}.`);
    }
    if (tokens.has(token)) throw new TypeError(`${at}: ${nameOf(token as Token)} has a serializer already; give each token one.`);
    if (s === null || typeof s !== 'object') throw new TypeError(`${at}: the serializer must be an object { key, version, scope, serialize, deserialize }, got ${describeValue(s)}.`);
    const r = s as Record<string, unknown>;
    const key = r.key;
    const version = r.version;
    const scope = r.scope;
    const serialize = r.serialize;
    const deserialize = r.deserialize;
    const restore = r.restore;
    if (typeof key !== 'string' || key.length === 0 || key.length > 1024) {
      throw new TypeError(`${at}: key must be a stable non-empty string (never a class name), got ${describeValue(key)}.`);
    }
    if (byKey.has(key)) throw new TypeError(`${at}: key "${key}" is used by another serializer; keys must be unique.`);
    if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
      throw new TypeError(`${at} ("${key}"): version must be a positive integer, got ${describeValue(version)}.`);
    }
    if (scope !== 'session' && scope !== 'agent') {
      throw new TypeError(`${at} ("${key}"): scope must be 'session' or 'agent', got ${describeValue(scope)}.`);
    }
    if (typeof serialize !== 'function' || typeof deserialize !== 'function') {
      throw new TypeError(`${at} ("${key}"): serialize and deserialize must be functions.`);
    }
    if (restore !== undefined && typeof restore !== 'function') {
      throw new TypeError(`${at} ("${key}"): restore must be a function (target, data, version) => void when given, got ${describeValue(restore)}.`);
    }
    const checked: CheckedSerializer = Object.freeze({
      token: token as Token,
      key,
      version,
      scope,
      serialize: (v: unknown) => (serialize as (v: unknown) => JsonValue).call(s, v),
      deserialize: (d: JsonValue, ver: number) => (deserialize as (d: JsonValue, v: number) => unknown).call(s, d, ver),
      restore:
        restore === undefined ? undefined : (target: object, d: JsonValue, ver: number) => void (restore as (t: object, d: JsonValue, v: number) => unknown).call(s, target, d, ver),
    });
    tokens.add(token);
    byKey.set(key, checked);
    list.push(checked);
  }
  return { list, byKey };
}

/** @internal The context whose own local a serializer snapshots. */
export interface LocalHomes {
  readonly agent: SystemContext;
  readonly session: SystemContext | undefined;
}

/**
 * @internal Serializes every persisted local present in its home context (as an own local).
 * A throw or a value that is not lossless JSON is `SERIALIZE_FAILED` naming the key.
 */
export function serializeLocals(set: SerializerSet, homes: LocalHomes, sessionId: string): PersistedLocal[] {
  const out: PersistedLocal[] = [];
  for (const s of set.list) {
    const ctx = s.scope === 'agent' ? homes.agent : homes.session;
    if (ctx === undefined || ctx.isDisposed || !ctx.hasLocal(s.token)) continue;
    const value = ctx.get(s.token);
    let data: JsonValue;
    try {
      data = snapshotJson(s.serialize(value), `the serializer "${s.key}"`, 'serialize(value)');
    } catch (err) {
      throw new SessionError(
        'SERIALIZE_FAILED',
        `session "${sessionId}": the serializer "${s.key}" (${nameOf(s.token)}, ${s.scope} scope) failed: ${errorText(err)}. ` +
          `The turn was not committed and memory went back to the last committed turn; make serialize(value) return lossless JSON.`,
        { sessionId, cause: err },
      );
    }
    out.push(Object.freeze({ key: s.key, scope: s.scope, version: s.version, data }));
  }
  return out;
}

/**
 * @internal A persisted local ready to be put back: either `value` (a new value from
 * `deserialize`, to insert) or `target` (the live instance, to restore in place with the
 * serializer's `restore`).
 */
export interface RestoredLocal {
  readonly serializer: CheckedSerializer;
  readonly persisted: PersistedLocal;
  /** The deserialized value (`undefined` when `target` is set). */
  readonly value: unknown;
  /** The live instance to restore in place, when the serializer has `restore`. */
  readonly target: object | undefined;
}

/**
 * @internal Deserializes every persisted local before any is inserted (all or nothing):
 * `UNKNOWN_LOCAL` for a key without serializer (skipped with `'drop'`),
 * `UNSUPPORTED_FORMAT` for a version newer than the serializer's, `DESERIALIZE_FAILED`
 * for a throw or an `undefined` result. Each call of `deserialize` gets its own fresh,
 * mutable copy of the data. Given `live`, a local whose serializer has `restore` and whose
 * home context holds an object for it is planned as an in-place restore of that object
 * (nothing is called yet).
 */
export function deserializeLocals(
  set: SerializerSet,
  persisted: readonly PersistedLocal[],
  unknownLocals: 'fail' | 'drop',
  sessionId: string,
  live?: LocalHomes,
): RestoredLocal[] {
  const out: RestoredLocal[] = [];
  for (const p of persisted) {
    const s = set.byKey.get(p.key);
    if (s === undefined) {
      if (unknownLocals === 'drop') continue;
      throw new SessionError(
        'UNKNOWN_LOCAL',
        `session "${sessionId}": the persisted local "${p.key}" (${p.scope} scope, version ${p.version}) has no serializer. ` +
          `Add one with that key to SessionsPlugin({ serializers }), or pass unknownLocals: 'drop' to skip it.`,
        { sessionId },
      );
    }
    if (p.version > s.version) {
      throw new SessionError(
        'UNSUPPORTED_FORMAT',
        `session "${sessionId}": the persisted local "${p.key}" was written by version ${p.version} of its serializer, newer than this one (${s.version}). ` +
          `Run the newer code, or bump this serializer's version with a migration.`,
        { sessionId },
      );
    }
    const target = live !== undefined && s.restore !== undefined ? liveObject(s, live) : undefined;
    if (target !== undefined) {
      out.push({ serializer: s, persisted: p, value: undefined, target });
      continue;
    }
    let value: unknown;
    try {
      value = s.deserialize(thawJson(p.data), p.version);
    } catch (err) {
      throw new SessionError(
        'DESERIALIZE_FAILED',
        `session "${sessionId}": the deserializer of "${p.key}" (${nameOf(s.token)}) threw on version ${p.version}: ${errorText(err)}. Nothing was restored.`,
        { sessionId, cause: err },
      );
    }
    if (value === undefined) {
      throw new SessionError(
        'DESERIALIZE_FAILED',
        `session "${sessionId}": the deserializer of "${p.key}" (${nameOf(s.token)}) returned undefined; return the local's value.`,
        { sessionId },
      );
    }
    out.push({ serializer: s, persisted: p, value, target: undefined });
  }
  return out;
}

/** The object a serializer's home context holds as its own local, if any. */
function liveObject(s: CheckedSerializer, homes: LocalHomes): object | undefined {
  const ctx = s.scope === 'agent' ? homes.agent : homes.session;
  if (ctx === undefined || ctx.isDisposed) return undefined;
  const v = ctx._local(s.token)?.value;
  return v !== null && (typeof v === 'object' || typeof v === 'function') ? v : undefined;
}

/**
 * @internal Calls the serializer's `restore(target, data, version)` with a fresh, mutable
 * copy of `data`; a throw is `DESERIALIZE_FAILED` naming the key.
 */
export function restoreInPlace(s: CheckedSerializer, target: object, p: PersistedLocal, sessionId: string): void {
  try {
    (s.restore as NonNullable<CheckedSerializer['restore']>)(target, thawJson(p.data), p.version);
  } catch (err) {
    throw new SessionError(
      'DESERIALIZE_FAILED',
      `session "${sessionId}": restore(target, data, version) of "${p.key}" (${nameOf(s.token)}) threw on version ${p.version}: ${errorText(err)}.`,
      { sessionId, cause: err },
    );
  }
}

/**
 * @internal Puts restored locals back: an in-place one through the serializer's
 * `restore` (first, all of them), then each new value is inserted into its home context,
 * replacing the context's own instance (made by `per`, by `setup` or by an earlier
 * restore), which is disposed when the context owned it. A restore that throws rejects
 * (`DESERIALIZE_FAILED`) before any value is inserted. Resolves to the errors of disposing
 * replaced instances (every value is inserted regardless).
 */
export async function insertLocals(restored: readonly RestoredLocal[], homes: LocalHomes, sessionId: string): Promise<unknown[]> {
  for (const r of restored) if (r.target !== undefined) restoreInPlace(r.serializer, r.target, r.persisted, sessionId);
  const errors: unknown[] = [];
  for (const { serializer: s, value, target } of restored) {
    if (target !== undefined) continue;
    const ctx = s.scope === 'agent' ? homes.agent : homes.session;
    if (ctx === undefined) continue;
    if (ctx.hasLocal(s.token)) await ctx._dropLocals([s.token]).catch((err: unknown) => void errors.push(err));
    ctx.insert(s.token, value as never);
  }
  return errors;
}
