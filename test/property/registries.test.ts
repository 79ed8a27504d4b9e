/**
 * Model-based property test of the scoped tools registry: random sequences of
 * register / unregister / restrict / guard / dispose across a global layer and three
 * scopes, checked after every step against a small reference model. The model also
 * knows which scope keys are live (SPEC 10.7): a read with an explicit key that is
 * neither the view's own nor live (a disposed scope's key, a forged one) must throw a
 * TypeError and `execute` must answer INVALID_ARGS; a disposed key may be taken again.
 */
import fc from 'fast-check';
import { Server, Tools, ToolsPlugin, createScope, type Scope, type SystemContext } from '../../src/index.js';
import { probe } from '../../src/testing/probe.js';

const NAMES = ['a', 'b', 'c', 'd'] as const;
const SLOTS = 4; // 0 = global, 1..3 = scopes

type Op =
  | { op: 'register'; slot: number; name: string }
  | { op: 'unregister'; pick: number }
  | { op: 'restrict'; slot: number; allow?: number[]; deny?: number[]; typo: boolean }
  | { op: 'unrestrict'; pick: number }
  | { op: 'guard'; slot: number; name: string }
  | { op: 'unguard'; pick: number }
  | { op: 'dispose'; slot: number; reuse: boolean };

const picks = fc.array(fc.nat(), { maxLength: 3 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('register' as const), slot: fc.nat(SLOTS - 1), name: fc.constantFrom(...NAMES) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('unregister' as const), pick: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record(
      { op: fc.constant('restrict' as const), slot: fc.nat(SLOTS - 1), allow: fc.option(picks, { nil: undefined }), deny: fc.option(picks, { nil: undefined }), typo: fc.boolean() },
      { requiredKeys: ['op', 'slot', 'typo'] },
    ),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('unrestrict' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('guard' as const), slot: fc.nat(SLOTS - 1), name: fc.constantFrom(...NAMES) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('unguard' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('dispose' as const), slot: fc.integer({ min: 1, max: SLOTS - 1 }), reuse: fc.boolean() }) },
);

interface Reg { slot: number; name: string; tag: string; off: () => void }
interface Restr { slot: number; allow?: Set<string>; deny?: Set<string>; off: () => void }
interface Guard { slot: number; name: string; id: number; off: () => void }

class Model {
  layers: Map<string, Reg>[] = Array.from({ length: SLOTS }, () => new Map());
  restrictions: Restr[] = [];
  guards: Guard[] = [];
  /** Keys of disposed scopes not taken again: every explicit read of them is refused. */
  dead = new Set<object>();

  known(slot: number): string[] {
    const out = [...this.layers[0].keys()];
    if (slot !== 0) for (const n of this.layers[slot].keys()) if (!this.layers[0].has(n)) out.push(n);
    return out;
  }

  visible(slot: number): Reg[] {
    const own = slot === 0 ? new Map<string, Reg>() : this.layers[slot];
    const rs = this.restrictions.filter((r) => r.slot === slot);
    const out: Reg[] = [];
    for (const [n, g] of this.layers[0]) {
      const mine = own.get(n);
      if (mine) out.push(mine);
      else if (rs.every((r) => (!r.allow || r.allow.has(n)) && (!r.deny || !r.deny.has(n)))) out.push(g);
    }
    for (const [n, r] of own) if (!this.layers[0].has(n)) out.push(r);
    return out;
  }

  denial(slot: number, n: string): string | undefined {
    for (const s of slot === 0 ? [0] : [0, slot]) {
      const g = this.guards.find((x) => x.slot === s && x.name === n);
      if (g) return `guard ${g.id}`;
    }
    return undefined;
  }
}

/** A key no scope was ever made with. */
const FORGED = { id: 'forged' };

async function check(model: Model, ctxs: SystemContext[], scopes: (Scope | undefined)[]): Promise<void> {
  const app = ctxs[0];
  for (let slot = 0; slot < SLOTS; slot++) {
    const view = ctxs[slot].get(Tools);
    const key = slot === 0 ? undefined : scopes[slot]?.key;
    const expected = model.visible(slot);
    expect(view.visible().map((t) => t.name)).toEqual(expected.map((r) => r.name));
    expect(view.schemas().map((s) => s.name)).toEqual(expected.map((r) => r.name));
    expect(view.knownNames()).toEqual(model.known(slot));
    // the same answers through the unscoped view with an explicit scope
    expect(app.get(Tools).visible(key).map((t) => t.name)).toEqual(expected.map((r) => r.name));
    for (const n of NAMES) {
      const want = expected.find((r) => r.name === n);
      expect(view.get(n)?.description).toBe(want?.tag);
      const res = await view.execute({ callId: `${slot}-${n}`, name: n, arguments: {} });
      if (!want) expect(res.error?.code).toBe('UNKNOWN_TOOL');
      else {
        const denial = model.denial(slot, n);
        if (denial) expect(res.content).toBe(`Error: ${denial}`);
        else expect(res).toEqual({ callId: `${slot}-${n}`, content: want.tag, isError: false, output: want.tag });
      }
    }
    // SPEC 10.7: through this view, every live key reads as its slot; a dead or forged key throws
    for (let other = 1; other < SLOTS; other++) {
      const live = (scopes[other] as Scope).key;
      expect(view.visible(live).map((t) => t.name)).toEqual(model.visible(other).map((r) => r.name));
      expect(view.knownNames(live)).toEqual(model.known(other));
    }
    for (const refused of [...model.dead, FORGED]) {
      expect(() => view.get('a', refused)).toThrow(TypeError);
      expect(() => view.visible(refused)).toThrow(TypeError);
      expect(() => view.schemas(refused)).toThrow(TypeError);
      expect(() => view.knownNames(refused)).toThrow(TypeError);
    }
    // isolation: no scope ever sees another scope's tags
    for (const t of view.visible()) {
      const owner = Number(t.description.split(':')[0]);
      expect(owner === 0 || owner === slot).toBe(true);
    }
  }
}

test('property: every scope sees global + its own layer, restricted and guarded as the model says', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { maxLength: 30 }), async (ops) => {
      const server = new Server();
      server.addPlugins(new ToolsPlugin());
      await server.finish();
      const app = server.createContext();
      const scopes: (Scope | undefined)[] = [undefined];
      for (let i = 1; i < SLOTS; i++) scopes.push(createScope(app, { id: `s${i}` }));
      const ctxOf = (slot: number): SystemContext => (slot === 0 ? app : (scopes[slot] as Scope).ctx);
      const model = new Model();
      let seq = 0;
      let guardId = 0;
      for (const op of ops) {
        switch (op.op) {
          case 'register': {
            const tag = `${op.slot}:${op.name}:${seq++}`;
            const def = { name: op.name, description: tag, parameters: { type: 'object' }, execute: () => tag };
            if (model.layers[op.slot].has(op.name)) {
              expect(() => ctxOf(op.slot).get(Tools).register(def)).toThrow(/already registered/);
            } else {
              const reg: Reg = { slot: op.slot, name: op.name, tag, off: ctxOf(op.slot).get(Tools).register(def) };
              model.layers[op.slot].set(op.name, reg);
            }
            break;
          }
          case 'unregister': {
            const all = model.layers.flatMap((l) => [...l.values()]);
            if (all.length === 0) break;
            const r = all[op.pick % all.length];
            r.off();
            model.layers[r.slot].delete(r.name);
            break;
          }
          case 'restrict': {
            const t = ctxOf(op.slot).get(Tools);
            // names picked from what the scope knows, plus (sometimes) a typo
            const pool = [...model.known(op.slot), ...(op.typo ? ['zz'] : [])];
            const pick = (xs: number[] | undefined) => (xs === undefined ? undefined : [...new Set(pool.length ? xs.map((i) => pool[i % pool.length]) : [])]);
            const allow = pick(op.allow);
            const deny = pick(op.deny);
            const spec = { ...(allow ? { allow } : {}), ...(deny ? { deny } : {}) };
            if (op.slot === 0) {
              expect(() => t.restrict(spec)).toThrow('requires a scoped context');
              break;
            }
            if (!allow && (!deny || deny.length === 0)) {
              expect(() => t.restrict(spec)).toThrow('no-op');
              break;
            }
            const known = model.known(op.slot);
            const bad = [...(allow ?? []), ...(deny ?? [])].find((n) => !known.includes(n));
            if (bad) {
              expect(() => t.restrict(spec)).toThrow(`unknown tool "${bad}"; known tools for this scope: ${known.length ? known.join(', ') : '(none)'}`);
              break;
            }
            const off = t.restrict(spec);
            model.restrictions.push({ slot: op.slot, allow: allow && new Set(allow), deny: deny && new Set(deny), off });
            break;
          }
          case 'unrestrict': {
            if (model.restrictions.length === 0) break;
            const [r] = model.restrictions.splice(op.pick % model.restrictions.length, 1);
            r.off();
            break;
          }
          case 'guard': {
            const id = guardId++;
            const off = ctxOf(op.slot).get(Tools).guard((e) => (e.name === op.name ? `guard ${id}` : undefined));
            model.guards.push({ slot: op.slot, name: op.name, id, off });
            break;
          }
          case 'unguard': {
            if (model.guards.length === 0) break;
            const [g] = model.guards.splice(op.pick % model.guards.length, 1);
            g.off();
            break;
          }
          case 'dispose': {
            const old = (scopes[op.slot] as Scope).key;
            await (scopes[op.slot] as Scope).dispose();
            model.layers[op.slot] = new Map();
            model.restrictions = model.restrictions.filter((r) => r.slot !== op.slot);
            model.guards = model.guards.filter((g) => g.slot !== op.slot);
            model.dead.add(old);
            // between the disposal and a new scope taking the key, it is refused everywhere
            for (const refused of model.dead) {
              expect(() => app.get(Tools).visible(refused)).toThrow(/neither this view's own scope nor a live scope key/);
              const r = await app.get(Tools).execute({ callId: 'dead', name: 'a', arguments: {}, scope: refused });
              expect(r.error?.code).toBe('INVALID_ARGS');
            }
            // a disposed key may be taken again: it is live once more, with an empty layer
            const key = op.reuse ? old : { id: `s${op.slot}-${seq++}` };
            scopes[op.slot] = createScope(app, key);
            model.dead.delete(key);
            break;
          }
        }
        await check(model, [0, 1, 2, 3].map(ctxOf), scopes);
      }
      for (let i = 1; i < SLOTS; i++) await (scopes[i] as Scope).dispose();
      expect(probe.registrationLeaks(server)).toEqual([]);
      await server.dispose();
    }),
    { numRuns: 80 },
  );
});
