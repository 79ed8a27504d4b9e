/**
 * `snapshotJsonLike(value, template)`: the snapshot `Tools.register` takes of a schema
 * object registered before. It must answer exactly what `snapshotJson(value)` answers
 * (same JSON, same refusals, deep-frozen), reuse the template where the value equals it,
 * and read every property once.
 */
import fc from 'fast-check';
import { NotLosslessJsonError, snapshotJson, snapshotJsonLike, type JsonValue } from '../../src/util/lossless-json.js';

// JSON text round trip: fast-check may generate -0, which JSON (and the snapshot) refuses.
const json = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.parse(JSON.stringify(v)) as JsonValue);

function deepFrozen(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return true;
  if (!Object.isFrozen(v)) return false;
  return Object.keys(v).every((k) => deepFrozen((v as Record<string, unknown>)[k]));
}

/** A mutable deep copy (what a user's definition holds). */
const copy = (v: JsonValue): unknown => JSON.parse(JSON.stringify(v)) as unknown;

/** Every object or array of `v` that is also (by identity) somewhere in `t`. */
function shared(v: unknown, t: unknown): number {
  const inT = new Set<unknown>();
  const walk = (x: unknown, f: (y: unknown) => void): void => {
    if (x === null || typeof x !== 'object') return;
    f(x);
    for (const k of Object.keys(x)) walk((x as Record<string, unknown>)[k], f);
  };
  walk(t, (y) => inT.add(y));
  let n = 0;
  walk(v, (y) => void (inT.has(y) && n++));
  return n;
}

describe('snapshotJsonLike', () => {
  test('answers the same JSON as snapshotJson, deep-frozen, for any value and any template', () => {
    fc.assert(
      fc.property(json, json, (value, t) => {
        const template = snapshotJson(t, 'x', 'p');
        const got = snapshotJsonLike(copy(value), template, 'x', 'p');
        expect(JSON.stringify(got)).toBe(JSON.stringify(snapshotJson(copy(value), 'x', 'p')));
        expect(deepFrozen(got)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  test('a value equal to its template returns the template itself', () => {
    fc.assert(
      fc.property(json, (v) => {
        const template = snapshotJson(v, 'x', 'p');
        const got = snapshotJsonLike(copy(v), template, 'x', 'p');
        if (template !== null && typeof template === 'object') expect(got).toBe(template);
        else expect(got).toBe(template);
      }),
      { numRuns: 300 },
    );
  });

  test('a changed value reuses the unchanged subtrees and never hands out a changed one', () => {
    const template = snapshotJson({ type: 'object', properties: { q: { type: 'string' }, n: { type: 'number' } }, required: ['q'] }, 'x', 'p') as Record<string, any>;
    const changed = { type: 'object', properties: { q: { type: 'string' }, n: { type: 'integer' } }, required: ['q'] };
    const got = snapshotJsonLike(changed, template, 'x', 'p') as Record<string, any>;
    expect(got).not.toBe(template);
    expect(got.properties).not.toBe(template.properties);
    expect(got.properties.q).toBe(template.properties.q);
    expect(got.required).toBe(template.required);
    expect(got.properties.n).toEqual({ type: 'integer' });
    expect(template.properties.n).toEqual({ type: 'number' });
    expect(shared(got, template)).toBe(2);
  });

  test('key order is part of equality (the interning key is the JSON text)', () => {
    const template = snapshotJson({ a: 1, b: 2 }, 'x', 'p');
    const got = snapshotJsonLike({ b: 2, a: 1 }, template, 'x', 'p');
    expect(got).not.toBe(template);
    expect(JSON.stringify(got)).toBe('{"b":2,"a":1}');
  });

  test('an own __proto__ key stays an own data property, against a template too', () => {
    const raw = JSON.parse('{"properties":{"__proto__":{"type":"string"}}}') as unknown;
    const template = snapshotJson(raw, 'x', 'p');
    const again = snapshotJsonLike(JSON.parse('{"properties":{"__proto__":{"type":"string"}}}'), template, 'x', 'p');
    expect(again).toBe(template);
    const other = snapshotJsonLike(JSON.parse('{"properties":{"__proto__":{"type":"number"}}}'), template, 'x', 'p') as any;
    expect(Object.getPrototypeOf(other.properties)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(other.properties, '__proto__')?.value).toEqual({ type: 'number' });
  });

  test('refuses what snapshotJson refuses, with the same path, whatever the template', () => {
    const template = snapshotJson({ a: { b: [1, 2] } }, 'x', 'p');
    for (const bad of [{ a: { b: [1, Number.NaN] } }, { a: { b: [1, undefined] } }, { a: { b: new Date(0) } }, { a: { b: [1, -0] } }]) {
      let a: unknown;
      let b: unknown;
      try {
        snapshotJson(bad, 'x', 'p');
      } catch (err) {
        a = err;
      }
      try {
        snapshotJsonLike(bad, template, 'x', 'p');
      } catch (err) {
        b = err;
      }
      expect(a).toBeInstanceOf(NotLosslessJsonError);
      expect(b).toBeInstanceOf(NotLosslessJsonError);
      expect((b as Error).message).toBe((a as Error).message);
    }
  });

  test('reads every property once, also when the value equals its template', () => {
    const template = snapshotJson({ type: 'object', properties: { q: { type: 'string' } } }, 'x', 'p');
    const reads = new Map<string, number>();
    const counted = (path: string, o: Record<string, unknown>): object => {
      const out = {};
      for (const [k, v] of Object.entries(o)) {
        Object.defineProperty(out, k, {
          enumerable: true,
          get: () => {
            reads.set(`${path}.${k}`, (reads.get(`${path}.${k}`) ?? 0) + 1);
            return v;
          },
        });
      }
      return out;
    };
    const value = counted('p', { type: 'object', properties: counted('p.properties', { q: counted('p.properties.q', { type: 'string' }) }) });
    expect(snapshotJsonLike(value, template, 'x', 'p')).toBe(template);
    expect([...reads.values()].every((n) => n === 1)).toBe(true);
    expect(reads.size).toBe(4);
  });
});

describe('snapshotJson: the shared ancestor stack', () => {
  test('a getter that snapshots re-entrantly changes neither snapshot: cycles are still found, and none is invented', () => {
    const inner = { a: { b: 1 } };
    const outer: Record<string, unknown> = { x: { y: {} } };
    let innerResult: JsonValue | undefined;
    Object.defineProperty(outer.x as object, 'z', {
      enumerable: true,
      get: () => {
        // re-entrant: a deeper snapshot of another value while the outer one is at depth 2
        innerResult = snapshotJson(inner, 'inner', 'i');
        return outer; // a cycle back to the root of the outer snapshot
      },
    });
    expect(() => snapshotJson(outer, 'outer', 'o')).toThrow(/o\.x\.z is a cycle/);
    expect(innerResult).toEqual({ a: { b: 1 } });
    // a value whose objects sit at the depths the re-entrant snapshot used is no cycle
    const shared = { k: 1 };
    const tricky: Record<string, unknown> = { p: {} };
    Object.defineProperty(tricky.p as object, 'q', {
      enumerable: true,
      get: () => {
        snapshotJson({ deep: { deeper: shared } }, 'inner', 'i');
        return shared;
      },
    });
    expect(snapshotJson(tricky, 'outer', 'o')).toEqual({ p: { q: { k: 1 } } });
  });

  test('a snapshot keeps no reference to the value it read (the stack is cleared, also after a refusal)', async () => {
    const v8 = await import('node:v8');
    const vm = await import('node:vm');
    const gc = (globalThis as { gc?: () => void }).gc ?? (v8.setFlagsFromString('--expose_gc'), vm.runInNewContext('gc') as () => void);
    const refs: WeakRef<object>[] = [];
    (() => {
      const ok = { a: { b: { c: 'x' } } };
      const refused = { a: { b: { c: undefined } } };
      refs.push(new WeakRef(ok.a.b), new WeakRef(refused.a.b));
      snapshotJson(ok, 'x', 'p');
      expect(() => snapshotJson(refused, 'x', 'p')).toThrow(NotLosslessJsonError);
    })();
    // a shallower snapshot afterwards must not leave the deeper slots of the earlier ones set
    snapshotJson({ shallow: 1 }, 'x', 'p');
    for (let i = 0; i < 10 && refs.some((r) => r.deref() !== undefined); i++) {
      await new Promise((r) => setImmediate(r));
      gc();
    }
    expect(refs.map((r) => r.deref())).toEqual([undefined, undefined]);
  });
});
