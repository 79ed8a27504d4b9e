/**
 * Model-based property test of the compiled validators (issue 8 #5): random sequences of
 * registering and disposing tools whose schemas come from a small pool (shared) or are
 * distinct (many compiles, so ajv generations rotate and the released LRU evicts),
 * checked after every step against a reference model: one validator per distinct live
 * schema, identical schemas share one stored object, the LRU stays bounded, and every
 * live tool still accepts its valid arguments and refuses its invalid ones.
 */
import fc from 'fast-check';
import { Server, Tools, ToolsPlugin, type JsonSchema } from '../../src/index.js';
import { toolRegistryOf } from '../../src/tools/tools.js';
import type { ToolRegistry } from '../../src/tools/registry.js';
import { RELEASED_VALIDATORS_MAX } from '../../src/tools/schema/validator-cache.js';
import { GENERATION_SIZE } from '../../src/tools/schema/compile.js';

const D2020 = 'https://json-schema.org/draft/2020-12/schema';

/** A schema family: schema(i) with arguments it accepts and refuses. */
interface Family {
  schema(i: number): JsonSchema;
  valid(i: number): unknown;
  invalid(i: number): unknown;
}
const families: Family[] = [
  {
    schema: (i) => ({ type: 'object', properties: { [`p${i}`]: { type: 'string', maxLength: 3 } }, required: [`p${i}`] }),
    valid: (i) => ({ [`p${i}`]: 'abc' }),
    invalid: (i) => ({ [`p${i}`]: 'abcd' }),
  },
  {
    schema: (i) => ({ $schema: D2020, type: 'object', properties: { t: { type: 'array', prefixItems: [{ const: i }], items: false } } }),
    valid: (i) => ({ t: [i] }),
    invalid: (i) => ({ t: [i + 1] }),
  },
  {
    schema: (i) => ({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { m: { type: 'string', format: 'email', maxLength: 100 + i } } }),
    valid: () => ({ m: 'someone@example.com' }),
    invalid: () => ({ m: 'nope' }),
  },
];

type Op = { op: 'register'; family: number; index: number } | { op: 'dispose'; pick: number };
const opArb: fc.Arbitrary<Op> = fc.oneof(
  // a small pool of indices (schemas shared by several tools) and a wide one (distinct schemas)
  { weight: 3, arbitrary: fc.record({ op: fc.constant('register' as const), family: fc.nat(families.length - 1), index: fc.nat(3) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('register' as const), family: fc.nat(families.length - 1), index: fc.integer({ min: 4, max: 5_000 }) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('dispose' as const), pick: fc.nat() }) },
);

interface Live {
  readonly name: string;
  readonly family: number;
  readonly index: number;
  readonly off: () => void;
}

/** Tools share a validator exactly when their schemas have the same JSON text. */
const keyOf = (t: Live): string => JSON.stringify(families[t.family].schema(t.index));

test('validators stay shared, counted, bounded and correct under any register/dispose sequence', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 120 }), async (ops) => {
      const server = new Server();
      server.addPlugins(new ToolsPlugin());
      await server.finish();
      const tools = server.createContext().get(Tools);
      const reg = toolRegistryOf(server) as ToolRegistry;
      const live: Live[] = [];
      let n = 0;
      for (const op of ops) {
        if (op.op === 'register') {
          const name = `t${n++}`;
          const off = tools.register({ name, description: 'd', parameters: families[op.family].schema(op.index), execute: () => 'ok' });
          live.push({ name, family: op.family, index: op.index, off });
        } else if (live.length > 0) {
          const [gone] = live.splice(op.pick % live.length, 1);
          gone.off();
        }
        const keys = new Set(live.map(keyOf));
        expect(reg.validatorCount).toBe(keys.size);
        expect(reg.releasedValidatorCount).toBeLessThanOrEqual(RELEASED_VALIDATORS_MAX);
      }
      // identical schemas share one stored object; every live tool is enforced
      const byKey = new Map<string, unknown>();
      for (const t of live) {
        const params = tools.get(t.name)?.parameters;
        const key = keyOf(t);
        if (byKey.has(key)) expect(params).toBe(byKey.get(key));
        else byKey.set(key, params);
        const ok = await tools.execute({ callId: '1', name: t.name, arguments: families[t.family].valid(t.index) });
        expect(ok.error).toBeUndefined();
        const bad = await tools.execute({ callId: '2', name: t.name, arguments: families[t.family].invalid(t.index) });
        expect(bad.error?.code).toBe('INVALID_ARGS');
      }
      await server.dispose();
      expect(reg.validatorCount).toBe(0);
    }),
    { numRuns: 25 },
  );
});

test('validators compiled by earlier ajv generations keep working, shared and released like the others', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const tools = server.createContext().get(Tools);
  const reg = toolRegistryOf(server) as ToolRegistry;
  const count = GENERATION_SIZE * 3 + 5;
  const offs = Array.from({ length: count }, (_, i) => tools.register({ name: `d${i}`, description: 'd', parameters: families[i % 3].schema(10 + i), execute: () => 'ok' }));
  expect(reg.validatorCount).toBe(count);
  for (let i = 0; i < count; i++) {
    expect((await tools.execute({ callId: 'v', name: `d${i}`, arguments: families[i % 3].valid(10 + i) })).error).toBeUndefined();
    expect((await tools.execute({ callId: 'i', name: `d${i}`, arguments: families[i % 3].invalid(10 + i) })).error?.code).toBe('INVALID_ARGS');
  }
  // released newest first, so the LRU keeps the oldest generation's validators
  [...offs].reverse().forEach((off) => off());
  expect(reg.validatorCount).toBe(0);
  const kept = Math.min(count, RELEASED_VALIDATORS_MAX);
  expect(reg.releasedValidatorCount).toBe(kept);
  // the first one, compiled three generations ago, comes back out of the LRU and still works
  tools.register({ name: 'again', description: 'd', parameters: families[0].schema(10), execute: () => 'ok' });
  expect(reg.releasedValidatorCount).toBe(kept - 1);
  expect((await tools.execute({ callId: 'v', name: 'again', arguments: families[0].valid(10) })).error).toBeUndefined();
  expect((await tools.execute({ callId: 'i', name: 'again', arguments: families[0].invalid(10) })).error?.code).toBe('INVALID_ARGS');
  await server.dispose();
});
