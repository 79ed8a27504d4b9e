/**
 * Validation of what a session store is given, and the JSON text it stores. The checks a
 * store author reuses are public (from `polestar-di/sessions`); the rest is internal.
 *
 * Every store checks its input here before it writes anything, so a malformed call is a
 * `TypeError` with nothing written, whatever the backend. Bodies, meta and locals are
 * snapshotted as lossless JSON and stored as the text `JSON.stringify` makes of them: that
 * text escapes `\u0000` and lone surrogates (which SQLite's text binding truncates or
 * replaces and PostgreSQL's `text` and `jsonb` refuse), and keeps key order, so a read
 * gives back exactly what was written.
 */
import { describeValue } from '../../util/describe-value.js';
import { errorText } from '../../util/error-text.js';
import { NotLosslessJsonError, isKnownSnapshot, snapshotJson, type JsonValue } from '../../util/lossless-json.js';
import { SessionError } from '../errors.js';
import { corrupt } from './failures.js';
import type {
  AbortInput,
  AcquireOptions,
  BeginOptions,
  CommitInput,
  CreateSessionInput,
  DeleteOptions,
  EventsQuery,
  Lease,
  ListQuery,
  NewSessionEvent,
  PersistedLocal,
  TurnAttempt,
} from './contract.js';

/** @internal The format every row is written in; a greater one is refused on read. */
export const ROW_FORMAT = 1;
/** @internal Longest id, owner, kind, key or label accepted. */
export const MAX_NAME_LENGTH = 1024;
/** @internal Default of `keepCheckpoints`. */
export const DEFAULT_KEEP_CHECKPOINTS = 20;
/** @internal Default and maximum page size of `list`. */
export const DEFAULT_LIST_LIMIT = 100;
/** @internal */
export const MAX_LIST_LIMIT = 1000;
/** @internal Longest lease TTL accepted (24 days: fits a 32-bit timer). */
export const MAX_TTL_MS = 2 ** 31 - 1;

/**
 * A checked name (an id, owner, kind, key or label): a non-empty, well-formed string without NUL, at most 1024 characters.
 * @param value - what was given.
 * @param what - how the message names it (e.g. `input.sessionId`).
 * @throws TypeError naming `what` and what it must be.
 */
export function checkName(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new TypeError(`${what} must be a string, got ${describeValue(value)}.`);
  if (value.length === 0) throw new TypeError(`${what} must not be empty.`);
  if (value.length > MAX_NAME_LENGTH) throw new TypeError(`${what} must be at most ${MAX_NAME_LENGTH} characters, got ${value.length}.`);
  if (value.includes('\u0000')) throw new TypeError(`${what} must not contain NUL (\\u0000): ${JSON.stringify(value)}.`);
  if (!isWellFormed(value)) throw new TypeError(`${what} must be well-formed Unicode (it has a lone surrogate): ${JSON.stringify(value)}.`);
  return value;
}

function isWellFormed(s: string): boolean {
  const f = (s as { isWellFormed?: () => boolean }).isWellFormed;
  if (f !== undefined) return f.call(s);
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
}

/**
 * A checked integer from `min` to `max`.
 * @param value - what was given.
 * @param what - how the message names it.
 * @throws TypeError naming `what` and the range.
 */
export function checkInt(value: unknown, what: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`;
    throw new TypeError(`${what} must be ${range}, got ${describeValue(value)}.`);
  }
  return value;
}

/**
 * @internal Runs the check of one argument: a `TypeError` or `SessionError` passes through;
 * anything else thrown while reading the argument (a throwing getter or proxy trap) becomes
 * a `TypeError` naming it, so every store reports hostile input the same way.
 */
export function guarded<T>(what: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof TypeError || err instanceof SessionError) throw err;
    throw new TypeError(`${what} could not be read: ${errorText(err)}.`, { cause: err });
  }
}

/** @internal A checked plain options object (or `{}` for undefined). */
export function checkObject<T extends object>(value: unknown, what: string, optional: boolean): Partial<T> {
  if (value === undefined && optional) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`${what} must be an object, got ${describeValue(value)}.`);
  }
  return value as Partial<T>;
}

/** @internal A checked optional incarnation (see `Lease.incarnation`). */
export function checkIncarnation(value: unknown, what: string): string | undefined {
  return value === undefined ? undefined : checkName(value, what);
}

/**
 * The lease argument of a store method, snapshotted (each field read once); `incarnation` only when it has one.
 * @throws TypeError naming the field that is wrong or could not be read.
 */
export function checkLease(value: unknown, what = 'lease'): Lease {
  return guarded(what, () => {
    const o = checkObject<Lease>(value, what, false);
    const sessionId = checkName(o.sessionId, `${what}.sessionId`);
    const owner = checkName(o.owner, `${what}.owner`);
    const epoch = checkInt(o.epoch, `${what}.epoch`, 1);
    const incarnation = checkIncarnation(o.incarnation, `${what}.incarnation`);
    return incarnation === undefined ? { sessionId, owner, epoch } : { sessionId, owner, epoch, incarnation };
  });
}

/** @internal The lease a store hands out: `incarnation` only when one was given. */
export function leaseOf(sessionId: string, owner: string, epoch: number, incarnation: string | undefined): Lease {
  return incarnation === undefined ? { sessionId, owner, epoch } : { sessionId, owner, epoch, incarnation };
}

/**
 * The checked options of `begin(lease, options)`: `replaceOpen` (default false), `key` and `keyWindow` (default 20).
 * @throws TypeError naming the option that is wrong.
 */
export function checkBegin(value: unknown): CheckedBegin {
  return guarded('options', () => {
    const o = checkObject<BeginOptions>(value, 'store.begin(lease, options)', true);
    const replaceOpen = o.replaceOpen ?? false;
    if (typeof replaceOpen !== 'boolean') throw new TypeError(`store.begin(lease, options): options.replaceOpen must be a boolean, got ${describeValue(replaceOpen)}.`);
    const key = checkTurnKey(o.key, 'store.begin(lease, options): options.key');
    const keyWindow = o.keyWindow === undefined ? DEFAULT_KEEP_CHECKPOINTS : checkInt(o.keyWindow, 'store.begin(lease, options): options.keyWindow', 1);
    return { replaceOpen, key, keyWindow };
  });
}

/** What {@link checkBegin} returns. */
export interface CheckedBegin {
  /** Whether an attempt left open by the same lease is ended first. */
  readonly replaceOpen: boolean;
  /** The turn's key, if it has one. */
  readonly key: string | undefined;
  /** How many of the last committed turns the key is compared with. */
  readonly keyWindow: number;
}

/** @internal A checked optional turn key (a name: non-empty, well-formed, no NUL, at most 1024 characters). */
export function checkTurnKey(value: unknown, what: string): string | undefined {
  return value === undefined ? undefined : checkName(value, what);
}

/** @internal The `TURN_ALREADY_COMMITTED` of a begin whose key is the key of committed turn `turn`. */
export function alreadyCommitted(sessionId: string, key: string, turn: number): SessionError {
  return new SessionError(
    'TURN_ALREADY_COMMITTED',
    `turn already committed: turn ${turn} of session "${sessionId}" was committed with the key ${JSON.stringify(key)}, so this turn was not started and nothing was written. ` +
      'The message it carries is stored already: do not send it again.',
    { sessionId, turn },
  );
}

/**
 * The checked options of `renew(lease, options)`: the new TTL, or `undefined` to keep the lease's.
 * @throws TypeError naming the option that is wrong.
 */
export function checkRenew(value: unknown): number | undefined {
  return guarded('options', () => {
    const o = checkObject<{ ttlMs: number }>(value, 'store.renew(lease, options)', true);
    return o.ttlMs === undefined ? undefined : checkTtl(o.ttlMs, 'options.ttlMs');
  });
}

/**
 * The checked options of `load(sessionId, options)`: the turn asked for, or `undefined` for the last committed one.
 * @throws TypeError naming the option that is wrong.
 */
export function checkLoad(value: unknown): number | undefined {
  return guarded('options', () => {
    const o = checkObject<{ turn: number }>(value, 'store.load(sessionId, options)', true);
    return o.turn === undefined ? undefined : checkInt(o.turn, 'options.turn', 0);
  });
}

/** @internal */
export function checkTtl(value: unknown, what: string): number {
  return checkInt(value, what, 1, MAX_TTL_MS);
}

/**
 * A lossless-JSON snapshot of `value` (deep-frozen): what a store writes of a body, meta or local.
 * @throws TypeError naming `what` and the path of the first value JSON would not give back as it was.
 */
export function checkJson(value: unknown, what: string): JsonValue {
  try {
    return snapshotJson(value, what, what);
  } catch (err) {
    if (err instanceof NotLosslessJsonError) throw new TypeError(err.message, { cause: err });
    throw err;
  }
}

/**
 * Checked events `{ kind, body }` (a frozen copy).
 * @throws TypeError naming the event and field that are wrong.
 */
export function checkEvents(value: unknown, what: string): readonly NewSessionEvent[] {
  return guarded(what, () => checkEventList(value, what));
}

function checkEventList(value: unknown, what: string): readonly NewSessionEvent[] {
  if (!Array.isArray(value)) throw new TypeError(`${what} must be an array of { kind, body }, got ${describeValue(value)}.`);
  const out: NewSessionEvent[] = [];
  for (let i = 0; i < value.length; i++) {
    const e = checkObject<NewSessionEvent>(value[i], `${what}[${i}]`, false);
    const kind = checkName(e.kind, `${what}[${i}].kind`);
    if (!('body' in e)) throw new TypeError(`${what}[${i}].body is missing (use null for an empty body).`);
    const raw = e.body;
    // A message a history snapshotted (an appended message) is deep-frozen lossless JSON already.
    const body = isKnownSnapshot(raw) ? (raw as JsonValue) : checkJson(raw, `${what}[${i}].body`);
    out.push(Object.freeze({ kind, body }));
  }
  return Object.freeze(out);
}

/**
 * Checked persisted locals (a frozen copy); each `(scope, key)` at most once.
 * @throws TypeError naming the local and field that are wrong.
 */
export function checkLocals(value: unknown, what: string): readonly PersistedLocal[] {
  return guarded(what, () => checkLocalList(value, what));
}

function checkLocalList(value: unknown, what: string): readonly PersistedLocal[] {
  if (!Array.isArray(value)) throw new TypeError(`${what} must be an array of { key, scope, version, data }, got ${describeValue(value)}.`);
  const out: PersistedLocal[] = [];
  const keys = new Set<string>();
  for (let i = 0; i < value.length; i++) {
    const l = checkObject<PersistedLocal>(value[i], `${what}[${i}]`, false);
    const key = checkName(l.key, `${what}[${i}].key`);
    const scope = l.scope;
    if (scope !== 'session' && scope !== 'agent') throw new TypeError(`${what}[${i}].scope must be 'session' or 'agent', got ${describeValue(scope)}.`);
    const version = checkInt(l.version, `${what}[${i}].version`, 1);
    if (!('data' in l)) throw new TypeError(`${what}[${i}].data is missing (use null for an empty value).`);
    const data = checkJson(l.data, `${what}[${i}].data`);
    const id = `${scope}\u0000${key}`;
    if (keys.has(id)) throw new TypeError(`${what} has the ${scope} local "${key}" twice.`);
    keys.add(id);
    out.push(Object.freeze({ key, scope, version, data }));
  }
  return Object.freeze(out);
}

/** A checked attempt `{ turn, attempt }` (both integers >= 1), or a `TypeError` naming `what` and the field. */
export function checkAttempt(value: unknown, what: string): TurnAttempt {
  return guarded(what, () => {
    const o = checkObject<TurnAttempt>(value, what, false);
    return { turn: checkInt(o.turn, `${what}.turn`, 1), attempt: checkInt(o.attempt, `${what}.attempt`, 1) };
  });
}

/** What {@link checkCreate} returns. */
export interface CheckedCreate {
  /** The session id. */
  readonly sessionId: string;
  /** The agent's id. */
  readonly agentId: string;
  /** The lease owner. */
  readonly owner: string;
  /** The owner's incarnation, if one was given. */
  readonly incarnation: string | undefined;
  /** The lease TTL, in milliseconds. */
  readonly ttlMs: number;
  /** The session meta (`null` when not given). */
  readonly meta: JsonValue;
  /** The persisted locals of the checkpoint. */
  readonly locals: readonly PersistedLocal[];
}

/**
 * The checked input of `create(input)`: `meta` is `null` when not given.
 * @throws TypeError naming the field that is wrong.
 */
export function checkCreate(value: unknown): CheckedCreate {
  return guarded('input', () => {
    const o = checkObject<CreateSessionInput>(value, 'store.create(input)', false);
    const sessionId = checkName(o.sessionId, 'input.sessionId');
    const agentId = checkName(o.agentId, 'input.agentId');
    const owner = checkName(o.owner, 'input.owner');
    const incarnation = checkIncarnation(o.incarnation, 'input.incarnation');
    const ttlMs = checkTtl(o.ttlMs, 'input.ttlMs');
    const meta = o.meta === undefined ? null : checkJson(o.meta, 'input.meta');
    const locals = checkLocals(o.locals, 'input.locals');
    return { sessionId, agentId, owner, incarnation, ttlMs, meta, locals };
  });
}

/**
 * The checked arguments of `acquire(sessionId, options)`.
 * @throws TypeError naming the argument or option that is wrong.
 */
export function checkAcquire(
  sessionId: unknown,
  options: unknown,
): {
  /** The checked session id. */
  sessionId: string;
  /** The checked `options.owner`. */
  owner: string;
  /** The checked `options.incarnation`, when given. */
  incarnation: string | undefined;
  /** The checked `options.ttlMs`. */
  ttlMs: number;
} {
  const id = checkName(sessionId, 'sessionId');
  return guarded('options', () => {
    const o = checkObject<AcquireOptions>(options, 'store.acquire(sessionId, options)', false);
    const owner = checkName(o.owner, 'options.owner');
    const incarnation = checkIncarnation(o.incarnation, 'options.incarnation');
    return { sessionId: id, owner, incarnation, ttlMs: checkTtl(o.ttlMs, 'options.ttlMs') };
  });
}

/** What {@link checkCommit} returns. */
export interface CheckedCommit extends TurnAttempt {
  /** The events to write. */
  readonly events: readonly NewSessionEvent[];
  /** The persisted locals of the checkpoint. */
  readonly locals: readonly PersistedLocal[];
  /** How many of the last turns keep their checkpoint. */
  readonly keepCheckpoints: number;
}

/**
 * The checked input of `commit(lease, input)`: `events` is empty and `keepCheckpoints` 20 when not given.
 * @throws TypeError naming the field that is wrong.
 */
export function checkCommit(value: unknown): CheckedCommit {
  return guarded('input', () => {
    const o = checkObject<CommitInput>(value, 'store.commit(lease, input)', false);
    const { turn, attempt } = checkAttempt(o, 'input');
    const events = o.events === undefined ? [] : checkEvents(o.events, 'input.events');
    const locals = checkLocals(o.locals, 'input.locals');
    const keepCheckpoints = o.keepCheckpoints === undefined ? DEFAULT_KEEP_CHECKPOINTS : checkInt(o.keepCheckpoints, 'input.keepCheckpoints', 0);
    return { turn, attempt, events, locals, keepCheckpoints };
  });
}

/** What {@link checkAbort} returns. */
export interface CheckedAbort extends TurnAttempt {
  /** The events to write. */
  readonly events: readonly NewSessionEvent[];
  /** Why the attempt was aborted, if a reason was given. */
  readonly reason: string | undefined;
}

/**
 * The checked input of `abort(lease, input)`: `events` is empty when not given.
 * @throws TypeError naming the field that is wrong.
 */
export function checkAbort(value: unknown): CheckedAbort {
  return guarded('input', () => {
    const o = checkObject<AbortInput>(value, 'store.abort(lease, input)', false);
    const { turn, attempt } = checkAttempt(o, 'input');
    const events = o.events === undefined ? [] : checkEvents(o.events, 'input.events');
    const reason = o.reason;
    if (reason !== undefined && typeof reason !== 'string') throw new TypeError(`input.reason must be a string, got ${describeValue(reason)}.`);
    return { turn, attempt, events, reason };
  });
}

/** The checked optional label of `pin(lease, turn, label)`; a `TypeError` when it is given and not a name. */
export function checkLabel(value: unknown): string | undefined {
  return value === undefined ? undefined : checkName(value, 'label');
}

/**
 * The checked options of `delete(sessionId, options)`: `force` is false when not given.
 * @throws TypeError naming the option that is wrong.
 */
export function checkDelete(value: unknown): {
  /** The checked `options.lease`, when given. */
  lease: Lease | undefined;
  /** `options.force`, `false` when omitted. */
  force: boolean;
} {
  return guarded('options', () => {
    const o = checkObject<DeleteOptions>(value, 'store.delete(sessionId, options)', true);
    const lease = o.lease === undefined ? undefined : checkLease(o.lease, 'options.lease');
    const force = o.force ?? false;
    if (typeof force !== 'boolean') throw new TypeError(`options.force must be a boolean, got ${describeValue(force)}.`);
    return { lease, force };
  });
}

/**
 * The checked query of `list(query)`: `limit` is 100 when not given (at most 1000), and `after` is the session id the cursor decodes to (see {@link encodeCursor}).
 * @throws TypeError naming the field that is wrong, or a cursor `list()` did not return.
 */
export function checkList(value: unknown): {
  /** The checked `query.agentId`, when given. */
  agentId: string | undefined;
  /** The checked `query.limit`, or its default. */
  limit: number;
  /** The checked `query.after` cursor, when given. */
  after: string | undefined;
} {
  return guarded('query', () => {
    const o = checkObject<ListQuery>(value, 'store.list(query)', true);
    const agentId = o.agentId === undefined ? undefined : checkName(o.agentId, 'query.agentId');
    const limit = o.limit === undefined ? DEFAULT_LIST_LIMIT : checkInt(o.limit, 'query.limit', 1, MAX_LIST_LIMIT);
    const after = o.cursor === undefined ? undefined : decodeCursor(o.cursor);
    return { agentId, limit, after };
  });
}

/**
 * The checked query of `events(sessionId, query)`: `afterSeq` is 0 and `limit` unbounded when not given.
 * @throws TypeError naming the field that is wrong.
 */
export function checkEventsQuery(value: unknown): {
  /** The checked `query.afterSeq`, `0` when omitted. */
  afterSeq: number;
  /** The checked `query.limit`, or its default. */
  limit: number;
} {
  return guarded('query', () => {
    const o = checkObject<EventsQuery>(value, 'store.events(sessionId, query)', true);
    const afterSeq = o.afterSeq === undefined ? 0 : checkInt(o.afterSeq, 'query.afterSeq', 0);
    const limit = o.limit === undefined ? Number.MAX_SAFE_INTEGER : checkInt(o.limit, 'query.limit', 0);
    return { afterSeq, limit };
  });
}

/**
 * The cursor of a `list()` page whose last session id is `lastSessionId`, as {@link checkList} decodes it.
 */
export function encodeCursor(lastSessionId: string): string {
  return `s1.${Buffer.from(lastSessionId, 'utf8').toString('base64url')}`;
}

function decodeCursor(value: unknown): string {
  if (typeof value === 'string' && value.startsWith('s1.')) {
    const id = Buffer.from(value.slice(3), 'base64url').toString('utf8');
    if (id.length > 0 && encodeCursor(id) === value) return id;
  }
  throw new TypeError(`query.cursor must be a cursor returned by list(), got ${describeValue(value)}.`);
}

/**
 * Compares two strings by Unicode code point (the UTF-8 byte order of SQLite's BINARY and PostgreSQL's "C" collation), not by UTF-16 code unit: the order `list()` pages in.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate unit starts an astral code point, which sorts after every BMP one.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

// ---- routing: handoff and cancel requests, wake-ups ------------------------------------------

/** @internal Default `pollMs` of the stores: how often a caller polls for wake-ups in `'poll'` mode. */
export const DEFAULT_POLL_MS = 250;

/** @internal A checked `pollMs` option (a finite number >= 1), or the default. */
export function checkPollMs(value: unknown, what: string): number {
  if (value === undefined) return DEFAULT_POLL_MS;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 1 || value > MAX_TTL_MS) {
    throw new TypeError(`${what} must be a finite number of milliseconds from 1 to ${MAX_TTL_MS}, got ${describeValue(value)}.`);
  }
  return value;
}

/**
 * The checked arguments of `requestHandoff(sessionId, request)`: `until` as milliseconds
 * since the epoch.
 * @throws TypeError naming the argument or field that is wrong (`request.until` must be a valid `Date`).
 */
export function checkHandoffRequest(
  sessionId: unknown,
  request: unknown,
): {
  /** The checked session id. */
  sessionId: string;
  /** The checked `request.owner`: the waiting owner. */
  owner: string;
  /** `request.until`, in milliseconds since the epoch. */
  until: number;
} {
  const id = checkName(sessionId, 'sessionId');
  return guarded('request', () => {
    const o = checkObject<{ owner: string; until: Date }>(request, 'store.requestHandoff(sessionId, request)', false);
    const owner = checkName(o.owner, 'request.owner');
    const until = o.until;
    let ms: number;
    try {
      ms = Date.prototype.getTime.call(until);
    } catch {
      throw new TypeError(`request.until must be a Date (the waiter's deadline), got ${describeValue(until)}.`);
    }
    if (!Number.isFinite(ms)) throw new TypeError('request.until must be a valid Date, got an Invalid Date.');
    return { sessionId: id, owner, until: ms };
  });
}

/** The arguments of `requestCancel`, checked. */
export interface CheckedCancelRequest {
  /** The session whose open attempt is cancelled. */
  readonly sessionId: string;
  /** Why: any string (stored as JSON text). */
  readonly reason: string;
}

/**
 * The checked arguments of `requestCancel(sessionId, reason)`: `reason` is any string (stored as JSON text).
 * @throws TypeError naming the argument that is wrong.
 */
export function checkCancelRequest(sessionId: unknown, reason: unknown): CheckedCancelRequest {
  const id = checkName(sessionId, 'sessionId');
  if (typeof reason !== 'string') throw new TypeError(`reason must be a string, got ${describeValue(reason)}.`);
  return { sessionId: id, reason };
}

/** @internal The checked callbacks of `watch(onWake, onError)`; a `TypeError` naming the one that is not a function. */
export function checkWatch(onWake: unknown, onError: unknown): void {
  if (typeof onWake !== 'function') throw new TypeError(`store.watch(onWake, onError): onWake must be a function, got ${describeValue(onWake)}.`);
  if (onError !== undefined && typeof onError !== 'function') {
    throw new TypeError(`store.watch(onWake, onError): onError must be a function when given, got ${describeValue(onError)}.`);
  }
}

/** @internal The stored text of a checked JSON value. */
export function encodeJson(value: JsonValue): string {
  return JSON.stringify(value);
}

/** @internal Parses stored JSON text, or `CORRUPT_ROW` naming the row. */
export function decodeJson(text: unknown, where: string, sessionId: string | undefined): JsonValue {
  if (typeof text !== 'string') throw corrupt(`${where} holds ${describeValue(text)} instead of JSON text`, sessionId);
  try {
    return JSON.parse(text) as JsonValue;
  } catch (err) {
    throw corrupt(`${where} is not valid JSON (${(err as Error).message})`, sessionId, err);
  }
}

/** @internal Parses and checks stored locals, or `CORRUPT_ROW`. */
export function decodeLocals(text: unknown, where: string, sessionId: string): readonly PersistedLocal[] {
  const parsed = decodeJson(text, where, sessionId);
  try {
    return checkLocals(parsed, 'locals');
  } catch (err) {
    throw corrupt(`${where} does not hold persisted locals (${(err as Error).message})`, sessionId, err);
  }
}

/** @internal An `UNSUPPORTED_FORMAT` error for a row. */
export function newerRow(what: string, format: number, sessionId: string | undefined): SessionError {
  return new SessionError(
    'UNSUPPORTED_FORMAT',
    `unsupported format: ${what} was written in format ${format} by a newer polestar-di; this version reads format ${ROW_FORMAT} at most. Upgrade polestar-di in this process.`,
    { sessionId },
  );
}

