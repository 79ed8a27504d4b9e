/**
 * Model test of the validator cache and the schema templates (a repeat registration of an
 * unchanged schema object retains its validator record without the cache's lookups): random register /
 * unregister / in-place mutation / clone / Standard Schema / LRU-filler sequences on two
 * servers sharing raw schema objects; every live tool must validate as the schema was at
 * its register, and validatorCount must equal the number of distinct live schema texts.
 */
import fc from 'fast-check';
import { Tools, type Server, type SystemContext } from '../../src/index.js';
import { RELEASED_VALIDATORS_MAX } from '../../src/tools/schema/validator-cache.js';
import { toolRegistryOf } from '../../src/tools/tools.js';
import { tool, toolServer } from './helpers.js';

const must = <T>(v: T | undefined): T => {
  if (v === undefined) throw new Error('expected a value');
  return v;
};

type Content = { type: 'string' | 'number'; required: boolean; dialect: 0 | 1 | 2 };
const DIALECTS = [undefined, 'http://json-schema.org/draft-07/schema#', 'https://json-schema.org/draft/2020-12/schema'];

function setRaw(raw: any, c: Content): void {
  // mutate in place, keeping the object identities of raw and raw.properties.q
  for (const k of Object.keys(raw)) if (k !== 'type' && k !== 'properties') Reflect.deleteProperty(raw, k);
  raw.properties.q.type = c.type;
  if (c.required) raw.required = ['q'];
  if (DIALECTS[c.dialect] !== undefined) raw.$schema = DIALECTS[c.dialect];
}
function makeRaw(c: Content): any {
  const raw: any = { type: 'object', properties: { q: { type: 'string' } } };
  setRaw(raw, c);
  return raw;
}
const ARGS = [{ q: 'x' }, { q: 1 }, {}];
function expected(c: Content, a: any): boolean {
  if (!('q' in a)) return !c.required;
  return c.type === 'string' ? typeof a.q === 'string' : typeof a.q === 'number';
}
function keyOf(c: Content): string {
  return JSON.stringify(makeRaw(c));
}

const contentArb = fc.record({ type: fc.constantFrom<'string' | 'number'>('string', 'number'), required: fc.boolean(), dialect: fc.constantFrom<0 | 1 | 2>(0, 1, 2) });
const op = fc.oneof(
  { weight: 6, arbitrary: fc.record({ k: fc.constant('reg' as const), srv: fc.nat(1), raw: fc.nat(3), how: fc.constantFrom('raw', 'clone', 'standard') }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('unreg' as const), idx: fc.nat(50) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('mutate' as const), raw: fc.nat(3), c: contentArb }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('fill' as const), srv: fc.nat(1), n: fc.constantFrom(RELEASED_VALIDATORS_MAX + 2, 8, 40) }) },
);

const FILLERS = Array.from({ length: RELEASED_VALIDATORS_MAX + 2 }, (_, i) => ({ type: 'object', properties: { [`f${i}`]: { type: 'string' } } }));

describe('validator cache model', () => {
  let servers: { server: Server; app: SystemContext }[];
  beforeAll(async () => {
    servers = [await toolServer(), await toolServer()];
  });
  afterAll(async () => {
    for (const s of servers) await s.server.dispose();
  });

  test('live tools validate as registered; validatorCount = distinct live schemas', () => {
    let n = 0;
    fc.assert(
      fc.property(fc.array(contentArb, { minLength: 4, maxLength: 4 }), fc.array(op, { minLength: 1, maxLength: 60 }), (initial, ops) => {
        const raws = initial.map(makeRaw);
        const rawContent = [...initial];
        const live: { srv: number; name: string; c: Content; off: () => void }[] = [];
        const trace: string[] = [];
        try {
          for (const o of ops) {
            trace.push(JSON.stringify(o));
            if (o.k === 'reg') {
              const c = must(rawContent[o.raw]);
              const base = raws[o.raw];
              const parameters = o.how === 'raw' ? base : o.how === 'clone' ? JSON.parse(JSON.stringify(base)) : { '~standard': { version: 1, vendor: 't', jsonSchema: { input: () => base, output: () => base } } };
              const name = `t${n++}`;
              const off = must(servers[o.srv]).app.get(Tools).register(tool(name, () => 'ok', { parameters }));
              live.push({ srv: o.srv, name, c: { ...c }, off });
            } else if (o.k === 'unreg') {
              if (live.length === 0) continue;
              const [t] = live.splice(o.idx % live.length, 1);
              must(t).off();
            } else if (o.k === 'mutate') {
              setRaw(raws[o.raw], o.c);
              rawContent[o.raw] = o.c;
            } else {
              const tools = must(servers[o.srv]).app.get(Tools);
              const offs = FILLERS.slice(0, o.n).map((p) => tools.register(tool(`f${n++}`, () => 'x', { parameters: p })));
              for (const off of offs) off();
            }
            // check every live tool
            for (let s = 0; s < 2; s++) {
              const reg = must(toolRegistryOf(must(servers[s]).server));
              const mine = live.filter((t) => t.srv === s);
              for (const t of mine) {
                const def = must(must(servers[s]).app.get(Tools).get(t.name));
                for (const a of ARGS) {
                  const got = reg.validate(def, a);
                  if ((got === undefined) !== expected(t.c, a)) throw new Error(`server ${s} tool ${t.name} ${JSON.stringify(t.c)} args ${JSON.stringify(a)}: ${got}; params ${JSON.stringify(def.parameters)}`);
                }
              }
              const distinct = new Set(mine.map((t) => keyOf(t.c))).size;
              if (reg.validatorCount !== distinct) throw new Error(`server ${s}: validatorCount ${reg.validatorCount}, expected ${distinct}`);
              if (reg.releasedValidatorCount > RELEASED_VALIDATORS_MAX) throw new Error('released over max');
            }
          }
        } catch (e) {
          throw new Error(`${(e as Error).message}\ntrace:\n${trace.join('\n')}`);
        } finally {
          for (const t of live) t.off();
        }
        for (let s = 0; s < 2; s++) expect(must(toolRegistryOf(must(servers[s]).server)).validatorCount).toBe(0);
      }),
      { numRuns: Number(process.env.RUNS ?? 300) },
    );
  });
});
