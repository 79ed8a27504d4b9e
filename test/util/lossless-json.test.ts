/**
 * Lossless JSON at its home in `util/`: a snapshot is a detached, deep-frozen copy read once,
 * a refusal names the path and the reason, and a thawed copy is detached and mutable. (The
 * property tests of the path text and of templates are in test/tools.)
 */
import { MAX_JSON_DEPTH, NotLosslessJsonError, snapshotJson, snapshotJsonLike, thawJson, type JsonValue } from '../../src/util/lossless-json.js';

test('a snapshot is an equal, detached, deep-frozen copy', () => {
  const input = { a: [1, 'two', { b: null }], c: true };
  const snap = snapshotJson(input, 'tool arguments', 'arguments') as { a: [number, string, { b: null }]; c: boolean };
  expect(snap).toEqual(input);
  expect(snap).not.toBe(input);
  expect(Object.isFrozen(snap)).toBe(true);
  expect(Object.isFrozen(snap.a)).toBe(true);
  expect(Object.isFrozen(snap.a[2])).toBe(true);
  input.a.push(4);
  expect(snap.a).toHaveLength(3);
});

test('each property is read once', () => {
  let reads = 0;
  const input = {
    get x() {
      reads++;
      return reads === 1 ? 1 : 'changed';
    },
  };
  expect(snapshotJson(input, 'v', 'v')).toEqual({ x: 1 });
  expect(reads).toBe(1);
});

test.each<[string, unknown, string]>([
  ['NaN', { a: { b: Number.NaN } }, 'tool result must be losslessly JSON-serializable: result.a.b is NaN'],
  ['undefined in an array', [1, undefined], 'tool result must be losslessly JSON-serializable: result[1] is undefined'],
  ['a Map', { m: new Map() }, 'tool result must be losslessly JSON-serializable: result.m is a Map instance'],
])('a refusal names the path and the reason: %s', (_, value, message) => {
  let caught: unknown;
  try {
    snapshotJson(value, 'tool result', 'result');
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(NotLosslessJsonError);
  expect(caught).toBeInstanceOf(TypeError);
  expect((caught as Error).message.startsWith(message)).toBe(true);
});

test('values nested deeper than MAX_JSON_DEPTH are refused instead of overflowing the stack', () => {
  let deep: unknown = 0;
  for (let i = 0; i <= MAX_JSON_DEPTH + 1; i++) deep = [deep];
  expect(() => snapshotJson(deep, 'v', 'v')).toThrow(NotLosslessJsonError);
});

test('a value equal to its template returns the template itself', () => {
  const template = snapshotJson({ q: 'x', n: [1, 2] }, 'v', 'v');
  expect(snapshotJsonLike({ q: 'x', n: [1, 2] }, template, 'v', 'v')).toBe(template);
  const changed = snapshotJsonLike({ q: 'y', n: [1, 2] }, template, 'v', 'v') as { q: string; n: JsonValue };
  expect(changed.q).toBe('y');
  expect(changed.n).toBe((template as { n: JsonValue }).n);
});

test('a thawed copy is equal, detached and mutable, and keeps an own __proto__ key as data', () => {
  const frozen = snapshotJson(JSON.parse('{"a":[1,{"b":2}],"__proto__":{"p":1}}'), 'v', 'v');
  const thawed = thawJson(frozen) as Record<string, unknown> & { a: unknown[] };
  expect(thawed).toEqual(frozen);
  expect(Object.isFrozen(thawed)).toBe(false);
  expect(Object.isFrozen(thawed.a)).toBe(false);
  thawed.a.push(3);
  expect((frozen as { a: unknown[] }).a).toHaveLength(2);
  expect(Object.getPrototypeOf(thawed)).toBe(Object.prototype);
  expect(Object.getOwnPropertyDescriptor(thawed, '__proto__')?.value).toEqual({ p: 1 });
});
