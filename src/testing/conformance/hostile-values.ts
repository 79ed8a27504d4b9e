/**
 * @internal The hostile values of the session store conformance suite's fault rules:
 * throwing getters and proxies, and junk for every kind of argument.
 */
import type { Lease } from '../../sessions/store/contract.js';
import type { HostileSetup } from './hostile-types.js';

// ---- the fault rules: hostile input, idempotent ends, bounded calls, the optional methods ----

/** What the getters and proxy traps of hostile inputs throw. */
export class HostileReadError extends Error {
  constructor(what: string) {
    super(`hostile input: ${what} throws`);
    this.name = 'HostileReadError';
  }
}

/** Every field any store input has, and a few a careless store might read. */
export const HOSTILE_FIELDS = ['sessionId', 'agentId', 'owner', 'incarnation', 'epoch', 'ttlMs', 'meta', 'locals', 'turn', 'attempt', 'events', 'keepCheckpoints', 'reason', 'replaceOpen', 'keyWindow', 'limit', 'cursor', 'afterSeq', 'lease', 'force', 'kind', 'body', 'key', 'scope', 'version', 'data', 'label', 'then', 'length', 'toJSON'];

/** An object whose every field is a getter that throws. */
export function throwingGetters(): object {
  const o = {};
  for (const f of HOSTILE_FIELDS) {
    Object.defineProperty(o, f, {
      enumerable: true,
      configurable: true,
      get(): never {
        throw new HostileReadError(`the getter of "${f}"`);
      },
    });
  }
  return o;
}

/** A proxy of `target` whose every trap throws. */
export function throwingProxy<T extends object>(target: T): T {
  const trap =
    (name: string) =>
    (): never => {
      throw new HostileReadError(`the proxy trap "${name}"`);
    };
  return new Proxy(target, {
    get: trap('get'),
    set: trap('set'),
    has: trap('has'),
    deleteProperty: trap('deleteProperty'),
    ownKeys: trap('ownKeys'),
    getOwnPropertyDescriptor: trap('getOwnPropertyDescriptor'),
    defineProperty: trap('defineProperty'),
    getPrototypeOf: trap('getPrototypeOf'),
    setPrototypeOf: trap('setPrototypeOf'),
    isExtensible: trap('isExtensible'),
    preventExtensions: trap('preventExtensions'),
    apply: trap('apply'),
    construct: trap('construct'),
  });
}

/** A hostile argument: how the failure names it, and the value. */
export type Hostile = readonly [label: string, value: unknown];

/** Values no argument of any store method accepts. */
export function anyJunk(): Hostile[] {
  return [
    ['null', null],
    ['NaN', NaN],
    ['-1', -1],
    ['1.5', 1.5],
    ['Infinity', Infinity],
    ['true', true],
    ['a symbol', Symbol('hostile')],
    ['a bigint', 10n],
    [
      'a function',
      function hostile(): number {
        return 1;
      },
    ],
    ['an object with throwing getters', throwingGetters()],
    ['a Proxy whose traps throw', throwingProxy({})],
    ['an array Proxy whose traps throw', throwingProxy([])],
    ['a Date', new Date(0)],
  ];
}

export const required = (yes: boolean): Hostile[] => (yes ? [['undefined', undefined]] : []);

/**
 * Junk for an object argument (input, options, query). An object of another class (a `Date`)
 * is junk only where fields are required: as options whose fields are all optional it reads
 * as empty options.
 */
export function objectJunk(isRequired: boolean): Hostile[] {
  const junk = isRequired ? anyJunk() : anyJunk().filter(([label]) => label !== 'a Date');
  return [...required(isRequired), ...junk, ['5', 5], ['the string "hostile"', 'hostile'], ['an empty string', ''], ['an empty array', []], ['an array of junk', [null, 1]], ...(isRequired ? ([['an empty object', {}]] as Hostile[]) : [])];
}

/** Junk for an id or name (a non-empty, well-formed string without NUL, at most 1024 characters). */
export function nameJunk(isRequired: boolean): Hostile[] {
  return [
    ...required(isRequired),
    ...anyJunk(),
    ['5', 5],
    ['an empty string', ''],
    ['a string with NUL', 'x\u0000y'],
    ['a string with a lone surrogate', 'x\ud800'],
    ['a string of 1025 characters', 'x'.repeat(1025)],
    ['a String object', new String('x')],
    ['an array of strings', ['x']],
    ['an empty object', {}],
  ];
}

/** Junk for an integer from `min` (to `max`). */
export function intJunk(isRequired: boolean, min: number, max?: number): Hostile[] {
  const out: Hostile[] = [...required(isRequired), ...anyJunk(), ['the string "1"', '1'], ['an empty array', []], ['an empty object', {}]];
  if (min >= 1) out.push([String(min - 1), min - 1]);
  if (max !== undefined) out.push([String(max + 1), max + 1]);
  return out;
}

/** Junk for a boolean option. */
export function boolJunk(): Hostile[] {
  return [
    ['null', null],
    ['the string "yes"', 'yes'],
    ['1', 1],
    ['0', 0],
    ['a symbol', Symbol('hostile')],
    ['an empty object', {}],
    ['an object with throwing getters', throwingGetters()],
    ['a Proxy whose traps throw', throwingProxy({})],
  ];
}

/** Junk for an optional string (an abort reason, a cursor). */
export function stringJunk(): Hostile[] {
  return [
    ['null', null],
    ['5', 5],
    ['a symbol', Symbol('hostile')],
    ['a bigint', 10n],
    ['an empty object', {}],
    ['an empty array', []],
    ['an object with throwing getters', throwingGetters()],
    ['a Proxy whose traps throw', throwingProxy({})],
  ];
}

/** Values that are not lossless JSON. */
export function jsonJunk(isRequired: boolean): Hostile[] {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  return [
    ...required(isRequired),
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-0', -0],
    ['a symbol', Symbol('hostile')],
    ['a bigint', 10n],
    ['a function', () => 1],
    ['an object with an undefined field', { x: undefined }],
    ['a Date', new Date(0)],
    ['a cycle', cyclic],
    ['a Map', new Map([[1, 2]])],
    ['NaN deep inside', { a: [1, { b: NaN }] }],
    ['an object with throwing getters', throwingGetters()],
    ['a Proxy whose traps throw', throwingProxy({})],
    ['an array Proxy whose traps throw', throwingProxy([])],
  ];
}

/** Junk for an array of events. */
export function eventsJunk(isRequired: boolean): Hostile[] {
  return [
    ...required(isRequired),
    ['null', null],
    ['the string "x"', 'x'],
    ['5', 5],
    ['an empty object', {}],
    ['an object with throwing getters', throwingGetters()],
    ['a Proxy whose traps throw', throwingProxy({})],
    ['an array Proxy whose traps throw', throwingProxy([])],
    ['[null]', [null]],
    ['["x"]', ['x']],
    ['an event without body', [{ kind: 'tool/result' }]],
    ['an event without kind', [{ body: 1 }]],
    ['an event with an empty kind', [{ kind: '', body: 1 }]],
    ['an event with a numeric kind', [{ kind: 5, body: 1 }]],
    ['an event with a symbol body', [{ kind: 'tool/result', body: Symbol('hostile') }]],
    ['an event with a bigint body', [{ kind: 'tool/result', body: 10n }]],
    ['an event with a NaN body', [{ kind: 'tool/result', body: NaN }]],
    ['an event with a function body', [{ kind: 'tool/result', body: () => 1 }]],
    ['an event body with throwing getters', [{ kind: 'tool/result', body: throwingGetters() }]],
    ['an event with throwing getters', [throwingGetters()]],
    ['an event that is a Proxy whose traps throw', [throwingProxy({})]],
  ];
}

/** Junk for an array of persisted locals. */
export function localsJunk(isRequired: boolean): Hostile[] {
  const local = { key: 'app.memory', scope: 'agent', version: 1, data: 1 };
  return [
    ...required(isRequired),
    ['null', null],
    ['the string "x"', 'x'],
    ['an empty object', {}],
    ['an object with throwing getters', throwingGetters()],
    ['an array Proxy whose traps throw', throwingProxy([])],
    ['[null]', [null]],
    ['a local with scope "turn"', [{ ...local, scope: 'turn' }]],
    ['a local with an empty key', [{ ...local, key: '' }]],
    ['a local with version 0', [{ ...local, version: 0 }]],
    ['a local with version 1.5', [{ ...local, version: 1.5 }]],
    ['a local without data', [{ key: 'app.memory', scope: 'agent', version: 1 }]],
    ['a local with a symbol as data', [{ ...local, data: Symbol('hostile') }]],
    ['the same local twice', [local, { ...local, data: 2 }]],
    ['a local with throwing getters', [throwingGetters()]],
    ['a local that is a Proxy whose traps throw', [throwingProxy({})]],
  ];
}

/** Extra fields (and a symbol key) on a value of the right shape: a store may ignore them or refuse them. */
export const withExtras = <T extends object>(value: T): T => ({ ...value, hostileExtra: { nested: [1, 2] }, epochs: 'many', [Symbol('hostile')]: true });

/** Junk for a lease argument, against the sessions of {@link hostileSetup}. */
export function leaseJunk(h: HostileSetup, isRequired: boolean): Hostile[] {
  const { la } = h;
  return [
    ...required(isRequired),
    ...anyJunk(),
    ['5', 5],
    ['the string "hostile"', 'hostile'],
    ['an empty string', ''],
    ['an empty array', []],
    ['an empty object', {}],
    ['a lease without epoch', { sessionId: la.sessionId, owner: la.owner }],
    ['a lease without owner', { sessionId: la.sessionId, epoch: la.epoch }],
    ['a lease without sessionId', { owner: la.owner, epoch: la.epoch }],
    ['a lease with epoch 0', { ...la, epoch: 0 }],
    ['a lease with epoch -1', { ...la, epoch: -1 }],
    ['a lease with epoch 1.5', { ...la, epoch: 1.5 }],
    ['a lease with epoch NaN', { ...la, epoch: NaN }],
    ['a lease with the string epoch "1"', { ...la, epoch: String(la.epoch) }],
    ['a lease with a numeric owner', { ...la, owner: 5 }],
    ['a lease with an empty owner', { ...la, owner: '' }],
    ['a lease with a numeric sessionId', { ...la, sessionId: 5 }],
    ['a lease with a sessionId with NUL', { ...la, sessionId: `${la.sessionId}\u0000` }],
    ['a lease with a throwing epoch getter', leaseWithThrowingEpoch(la)],
    ['a lease that is a Proxy whose traps throw', throwingProxy({ ...la })],
  ];
}

export function leaseWithThrowingEpoch(la: Lease): object {
  const o = { sessionId: la.sessionId, owner: la.owner };
  Object.defineProperty(o, 'epoch', {
    enumerable: true,
    get(): never {
      throw new HostileReadError('the getter of "epoch"');
    },
  });
  return o;
}

/** Junk for an attempt `{ turn, attempt }` argument (shape only). */
export function attemptJunk(): Hostile[] {
  return [
    ...objectJunk(true),
    ['an attempt without attempt', { turn: 2 }],
    ['an attempt without turn', { attempt: 2 }],
    ['an attempt with the string turn "2"', { turn: '2', attempt: 2 }],
    ['an attempt with turn 0', { turn: 0, attempt: 1 }],
    ['an attempt with turn -1', { turn: -1, attempt: 1 }],
    ['an attempt with attempt 0', { turn: 2, attempt: 0 }],
    ['an attempt with attempt 1.5', { turn: 2, attempt: 1.5 }],
    ['an attempt with attempt NaN', { turn: 2, attempt: NaN }],
    ['an attempt with a bigint turn', { turn: 2n, attempt: 2 }],
  ];
}
