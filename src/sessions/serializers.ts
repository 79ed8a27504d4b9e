/**
 * Serializers say which locals of a durable session persist (SPEC §12.1): each maps a
 * token to a stable key, a version, the context whose own local it snapshots, and the two
 * functions between the value and lossless JSON.
 */
import type { SystemContext } from '../context/system-context.js';
import { describeValue, errorText, isToken, nameOf, type Token } from '../context/token.js';
import { snapshotJson, type JsonValue } from '../tools/lossless-json.js';
import { SessionError } from './errors.js';
import type { PersistedLocal } from './store.js';

/**
 * How one local persists. `key` is a stable string naming the local in the store (never a
 * class name: minifiers rename classes); `version` is a positive integer to bump when the
 * serialized shape changes; `deserialize(data, version)` receives the version that wrote
 * `data` (never a newer one) and migrates older shapes.
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
  /** Rebuilds a value from what `serialize` wrote with `version` (may migrate older versions; throw for garbage). */
  deserialize(data: JsonValue, version: number): T;
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
    throw new TypeError(`${where}: serializers must be an array of [token, { key, version, scope, serialize, deserialize }] pairs, got ${describeValue(value)}.`);
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
      throw new TypeError(`${at}: the token must be a class or a token() symbol, got ${describeValue(token)}.`);
    }
    if (tokens.has(token)) throw new TypeError(`${at}: ${nameOf(token as Token)} has a serializer already; give each token one.`);
    if (s === null || typeof s !== 'object') throw new TypeError(`${at}: the serializer must be an object { key, version, scope, serialize, deserialize }, got ${describeValue(s)}.`);
    const r = s as Record<string, unknown>;
    const key = r.key;
    const version = r.version;
    const scope = r.scope;
    const serialize = r.serialize;
    const deserialize = r.deserialize;
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
    const checked: CheckedSerializer = Object.freeze({
      token: token as Token,
      key,
      version,
      scope,
      serialize: (v: unknown) => (serialize as (v: unknown) => JsonValue).call(s, v),
      deserialize: (d: JsonValue, ver: number) => (deserialize as (d: JsonValue, v: number) => unknown).call(s, d, ver),
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

/** @internal A deserialized local, ready to be inserted. */
export interface RestoredLocal {
  readonly serializer: CheckedSerializer;
  readonly value: unknown;
}

/**
 * @internal Deserializes every persisted local before any is inserted (all or nothing):
 * `UNKNOWN_LOCAL` for a key without serializer (skipped with `'drop'`),
 * `UNSUPPORTED_FORMAT` for a version newer than the serializer's, `DESERIALIZE_FAILED`
 * for a throw or an `undefined` result.
 */
export function deserializeLocals(
  set: SerializerSet,
  persisted: readonly PersistedLocal[],
  unknownLocals: 'fail' | 'drop',
  sessionId: string,
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
    let value: unknown;
    try {
      value = s.deserialize(p.data, p.version);
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
    out.push({ serializer: s, value });
  }
  return out;
}

/**
 * @internal Inserts restored locals into their home contexts; each replaces the context's
 * own instance (made by `per`, by `setup` or by an earlier restore), which is disposed
 * when the context owned it.
 */
export async function insertLocals(restored: readonly RestoredLocal[], homes: LocalHomes): Promise<void> {
  for (const { serializer: s, value } of restored) {
    const ctx = s.scope === 'agent' ? homes.agent : homes.session;
    if (ctx === undefined) continue;
    if (ctx.hasLocal(s.token)) await ctx._dropLocals([s.token]);
    ctx.insert(s.token, value as never);
  }
}
