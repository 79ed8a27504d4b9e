import fc from 'fast-check';
import { Events, NotLosslessJsonError, Tools, createScope, snapshotJson, type JsonValue } from '../../src/index.js';
import { leaks, tool, toolServer } from './helpers.js';

const exotic = fc.anything({
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withSparseArray: true,
  withTypedArray: true,
  withUnicodeString: true,
});
const json = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as JsonValue);

function deepFrozen(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return true;
  return Object.isFrozen(v) && Object.values(v).every(deepFrozen);
}

afterEach(() => {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.prototype).not.toHaveProperty('polluted');
});

describe('lossless JSON snapshots', () => {
  test('property: JSON values are copied exactly, detached and deep-frozen', () => {
    fc.assert(
      fc.property(json, (v) => {
        const out = snapshotJson(v, 'x', 'x');
        expect(out).toStrictEqual(v);
        expect(deepFrozen(out)).toBe(true);
        if (v !== null && typeof v === 'object') expect(out).not.toBe(v);
      }),
    );
  });

  test('property: any value is either refused with NotLosslessJsonError or survives a JSON round trip unchanged', () => {
    fc.assert(
      fc.property(exotic, (v) => {
        let out: JsonValue;
        try {
          out = snapshotJson(v, 'tool arguments', 'arguments');
        } catch (err) {
          expect(err).toBeInstanceOf(NotLosslessJsonError);
          expect((err as Error).message).toMatch(/^tool arguments must be losslessly JSON-serializable: arguments/);
          return;
        }
        expect(JSON.parse(JSON.stringify(out))).toStrictEqual(out);
        expect(deepFrozen(out)).toBe(true);
      }),
    );
  });

  test('hand-written exotic values are refused with a path', () => {
    const cyc: any = { a: [] };
    cyc.a.push(cyc);
    class Point {
      x = 1;
    }
    const cases: [unknown, RegExp][] = [
      [new Map(), /arguments is a Map instance/],
      [{ a: new Set() }, /arguments\.a is a Set instance/],
      [new Point(), /Point instance/],
      [{ n: NaN }, /arguments\.n is NaN/],
      [{ n: -Infinity }, /is -Infinity/],
      [[-0], /arguments\[0\] is -0/],
      [{ u: undefined }, /is undefined/],
      [cyc, /arguments\.a\[0\] is a cycle/],
      // eslint-disable-next-line no-sparse-arrays
      [[1, , 3], /sparse array \(index 1 is a hole\)/],
      [Object.assign([1], { extra: 2 }), /extra properties/],
      [{ [Symbol('s')]: 1 }, /symbol key/],
      [Object.defineProperty({}, 'hidden', { value: 1, enumerable: false }), /non-enumerable property "hidden"/],
      [{ f: () => 1 }, /is a function/],
      [{ b: 1n }, /bigint/],
      [new Date(0), /Date instance/],
      [new Uint8Array(2), /Uint8Array instance|array/],
      [Object(1), /Number instance/],
    ];
    for (const [v, msg] of cases) expect(() => snapshotJson(v, 'tool arguments', 'arguments')).toThrow(msg);
  });

  test('deep nesting is refused, not a stack overflow', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => snapshotJson(deep, 'x', 'x')).toThrow(/nested deeper than/);
  });

  test('throwing getters and proxy traps are refused', () => {
    const g = Object.defineProperty({}, 'x', { get: () => { throw new Error('nope'); }, enumerable: true });
    expect(() => snapshotJson(g, 'x', 'args')).toThrow(/could not be read: nope/);
    const p = new Proxy({}, { ownKeys: () => { throw new Error('trap'); } });
    expect(() => snapshotJson(p, 'x', 'args')).toThrow(NotLosslessJsonError);
  });

  test('__proto__ keys stay own data properties: no prototype change, no pollution', () => {
    const v = JSON.parse('{"__proto__": {"polluted": true}, "a": {"__proto__": {"polluted": 1}}}') as unknown;
    const out = snapshotJson(v, 'x', 'x') as Record<string, any>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(out.polluted).toBeUndefined();
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":true},"a":{"__proto__":{"polluted":1}}}');
  });

  test('a getter that changes between reads is read exactly once', () => {
    let n = 0;
    const v = { get x() { return ++n; } };
    expect(snapshotJson(v, 'x', 'x')).toEqual({ x: 1 });
    expect(n).toBe(1);
  });
});

describe('the registry under bad input', () => {
  test('property: execute never throws; bad arguments are INVALID_ARGS, observed once, with no residue', async () => {
    const { server, app } = await toolServer();
    const A = createScope(app, { id: 'A' });
    let bodyCalls = 0;
    A.ctx.get(Tools).register({ ...tool('any'), parameters: {}, execute: () => ++bodyCalls });
    let observed = 0;
    app.get(Events).on('tools/result', () => void observed++);
    let calls = 0;
    await fc.assert(
      fc.asyncProperty(exotic, async (args) => {
        calls++;
        let lossless = true;
        try {
          snapshotJson(args, 'x', 'x');
        } catch {
          lossless = false;
        }
        const before = bodyCalls;
        const r = await A.ctx.get(Tools).execute({ callId: 'c', name: 'any', arguments: args });
        if (lossless) expect(r).toEqual({ callId: 'c', content: String(before + 1), isError: false, output: before + 1 });
        else {
          expect(r.error?.code).toBe('INVALID_ARGS');
          expect(bodyCalls).toBe(before);
        }
        expect(observed).toBe(calls);
      }),
      { numRuns: 200 },
    );
    await A.dispose();
    expect(leaks(server)).toEqual([]);
    await server.dispose();
  });

  test('property: any result is either JSON content or EXECUTION_ERROR', async () => {
    const { server, app } = await toolServer();
    let next: unknown;
    app.get(Tools).register({ ...tool('ret'), execute: () => next });
    await fc.assert(
      fc.asyncProperty(exotic, async (value) => {
        next = value;
        const r = await app.get(Tools).execute({ callId: 'c', name: 'ret', arguments: {} });
        if (r.isError) {
          expect(r.error?.code).toBe('EXECUTION_ERROR');
          expect(r.content).toMatch(/is not losslessly JSON-serializable/);
        } else if (typeof value === 'string') expect(r.content).toBe(value);
        else if (value === undefined) expect(r.content).toBe('');
        else expect(JSON.parse(r.content)).toStrictEqual(snapshotJson(value, 'x', 'x'));
      }),
      { numRuns: 200 },
    );
    await server.dispose();
  });

  test('property: register with any parameters either succeeds or throws a TypeError and leaves nothing', async () => {
    const { server, app } = await toolServer();
    const A = createScope(app, { id: 'A' });
    const t = A.ctx.get(Tools);
    await fc.assert(
      fc.asyncProperty(exotic, async (parameters) => {
        let off: (() => void) | undefined;
        try {
          off = t.register({ ...tool('p'), parameters: parameters as never });
        } catch (err) {
          expect(err).toBeInstanceOf(TypeError);
          expect(t.visible()).toEqual([]);
          expect(leaks(server)).toEqual([]);
          return;
        }
        expect(t.get('p')?.parameters).toStrictEqual(snapshotJson(parameters, 'x', 'x'));
        off();
        expect(t.visible()).toEqual([]);
      }),
      { numRuns: 200 },
    );
    await server.dispose();
  });

  test('arguments whose getters change between reads: validation and the body see the same single read', async () => {
    const { server, app } = await toolServer();
    let seen: unknown;
    app.get(Tools).register({ ...tool('s'), execute: (a: unknown) => { seen = a; return 'ok'; } });
    let n = 0;
    const args = { get q() { return n++ === 0 ? 'valid' : 42; } };
    const r = await app.get(Tools).execute({ callId: '1', name: 's', arguments: args });
    expect(r.content).toBe('ok');
    expect(seen).toEqual({ q: 'valid' });
    expect(n).toBe(1);
    await server.dispose();
  });

  test('__proto__ in arguments reaches the body as an own key without polluting anything', async () => {
    const { server, app } = await toolServer();
    let seen: any;
    app.get(Tools).register({ ...tool('s'), parameters: { type: 'object' }, execute: (a: unknown) => { seen = a; return 'ok'; } });
    const r = await app.get(Tools).execute({ callId: '1', name: 's', arguments: JSON.parse('{"__proto__":{"polluted":1}}') });
    expect(r.content).toBe('ok');
    expect(Object.hasOwn(seen, '__proto__')).toBe(true);
    expect(seen.polluted).toBeUndefined();
    await server.dispose();
  });
});
