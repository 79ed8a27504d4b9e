/**
 * Model-based test of the event bus's dispatch order and snapshot semantics (src/events/bus.ts
 * indexes listeners by scope; this pins that the index changed nothing observable).
 *
 * The model is the straightforward design: one copy-on-write array per event name, scanned
 * in full and filtered by scope at dispatch. Random programs of `on` (unscoped, scoped,
 * `{ global: true }`, `prepend`, sync or async listeners that may themselves add or remove
 * listeners mid-dispatch), disposers, scope disposals, `emit`, `waterfall`, concurrent
 * dispatches and `listenerCount` run against the real `Events` and against the model; the
 * call logs, waterfall results and counts must be identical.
 */
import fc from 'fast-check';
import { Events, Server, createScope, type Scope, type SystemContext } from '../../src/index.js';
import { installEvents } from '../../src/events/events.js';

const SCOPES = 3; // scope indexes 0..2; 3 = the unscoped app context
const NAMES = ['a', 'b'] as const;

interface Spec {
  readonly name: (typeof NAMES)[number];
  readonly scope: number; // 0..3
  readonly global: boolean;
  readonly prepend: boolean;
  readonly async: boolean;
}
type Action = { readonly kind: 'on'; readonly spec: Spec } | { readonly kind: 'off'; readonly target: number };
type Op =
  | { readonly op: 'on'; readonly spec: Spec; readonly actions: readonly Action[] }
  | { readonly op: 'off'; readonly target: number }
  | { readonly op: 'dispose-scope'; readonly scope: number }
  | { readonly op: 'dispatch'; readonly name: (typeof NAMES)[number]; readonly scope: number; readonly waterfall: boolean; readonly concurrent: boolean }
  | { readonly op: 'count'; readonly name: (typeof NAMES)[number]; readonly scope: number };

const specArb: fc.Arbitrary<Spec> = fc.record({
  name: fc.constantFrom(...NAMES),
  scope: fc.integer({ min: 0, max: SCOPES }),
  global: fc.boolean(),
  prepend: fc.boolean(),
  async: fc.boolean(),
});
const actionArb: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant('on' as const), spec: specArb }),
  fc.record({ kind: fc.constant('off' as const), target: fc.nat(40) }),
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('on' as const), spec: specArb, actions: fc.array(actionArb, { maxLength: 2 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('off' as const), target: fc.nat(40) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('dispose-scope' as const), scope: fc.integer({ min: 0, max: SCOPES - 1 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('dispatch' as const),
      name: fc.constantFrom(...NAMES),
      scope: fc.integer({ min: 0, max: SCOPES + 1 }), // SCOPES = unscoped event, SCOPES + 1 = a scope with no listeners
      waterfall: fc.boolean(),
      concurrent: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('count' as const), name: fc.constantFrom(...NAMES), scope: fc.integer({ min: 0, max: SCOPES + 1 }) }) },
);

/** What a program observes: calls, waterfall results, counts, in order. */
type Log = (string | number)[];

/** The two implementations behind one interface. */
interface Bus {
  on(spec: Spec, fn: (...args: unknown[]) => unknown): (() => void) | undefined;
  disposeScope(i: number): Promise<void>;
  emit(name: string, scope: number): Promise<unknown>;
  waterfall(name: string, scope: number, seed: unknown): Promise<unknown>;
  count(name: string, scope: number): number;
}

// ------------------------------------------------------------------ the model

interface ModelRec {
  readonly spec: Spec;
  readonly fn: (...args: unknown[]) => unknown;
  removed: boolean;
}

class ModelBus implements Bus {
  readonly lists = new Map<string, readonly ModelRec[]>();
  readonly disposed = new Set<number>();
  readonly byScope = new Map<number, Set<ModelRec>>();

  on(spec: Spec, fn: (...args: unknown[]) => unknown): (() => void) | undefined {
    if (spec.scope < SCOPES && this.disposed.has(spec.scope)) return undefined;
    const rec: ModelRec = { spec, fn, removed: false };
    const list = this.lists.get(spec.name) ?? [];
    this.lists.set(spec.name, spec.prepend ? [rec, ...list] : [...list, rec]);
    if (spec.scope < SCOPES) {
      let set = this.byScope.get(spec.scope);
      if (set === undefined) this.byScope.set(spec.scope, (set = new Set()));
      set.add(rec);
    }
    return () => this.#remove(rec);
  }

  #remove(rec: ModelRec): void {
    if (rec.removed) return;
    rec.removed = true;
    this.lists.set(
      rec.spec.name,
      (this.lists.get(rec.spec.name) ?? []).filter((r) => r !== rec),
    );
    this.byScope.get(rec.spec.scope)?.delete(rec);
  }

  async disposeScope(i: number): Promise<void> {
    this.disposed.add(i);
    for (const rec of [...(this.byScope.get(i) ?? [])].reverse()) this.#remove(rec);
  }

  #admits(rec: ModelRec, scope: number): boolean {
    return rec.spec.scope === SCOPES || rec.spec.global || rec.spec.scope === scope;
  }

  async emit(name: string, scope: number): Promise<unknown> {
    for (const r of this.lists.get(name) ?? []) {
      if (r.removed || !this.#admits(r, scope)) continue;
      try {
        const res = r.fn();
        if (res instanceof Promise) await res;
      } catch {
        // not generated
      }
    }
    return undefined;
  }

  async waterfall(name: string, scope: number, seed: unknown): Promise<unknown> {
    let v = seed;
    for (const r of this.lists.get(name) ?? []) {
      if (r.removed || !this.#admits(r, scope)) continue;
      const res = r.fn(v);
      v = res instanceof Promise ? await res : res;
    }
    return v;
  }

  count(name: string, scope: number): number {
    return (this.lists.get(name) ?? []).filter((r) => this.#admits(r, scope)).length;
  }
}

// ------------------------------------------------------------------ the real bus

class RealBus implements Bus {
  readonly keys: object[] = [];
  readonly scopes: Scope[] = [];
  readonly disposed = new Set<number>();

  constructor(
    readonly server: Server,
    readonly app: SystemContext,
  ) {
    for (let i = 0; i < SCOPES; i++) {
      const key = { scope: i };
      this.keys.push(key);
      this.scopes.push(createScope(app, key));
    }
    this.keys.push({ unknown: true }); // index SCOPES + 1 once shifted, see key()
  }

  key(scope: number): object | undefined {
    if (scope < SCOPES) return this.keys[scope];
    if (scope === SCOPES) return undefined;
    return this.keys[SCOPES];
  }

  on(spec: Spec, fn: (...args: unknown[]) => unknown): (() => void) | undefined {
    if (spec.scope < SCOPES && this.disposed.has(spec.scope)) return undefined;
    const ctx = spec.scope < SCOPES ? this.scopes[spec.scope].ctx : this.app;
    return ctx.get(Events).on(spec.name, fn, { global: spec.global, prepend: spec.prepend });
  }

  async disposeScope(i: number): Promise<void> {
    this.disposed.add(i);
    await this.scopes[i].dispose();
  }

  emit(name: string, scope: number): Promise<unknown> {
    return this.app.get(Events).emit(this.key(scope), name);
  }

  waterfall(name: string, scope: number, seed: unknown): Promise<unknown> {
    return this.app.get(Events).waterfall(this.key(scope), name, seed);
  }

  count(name: string, scope: number): number {
    return this.app.get(Events).listenerCount(name, this.key(scope));
  }
}

// ------------------------------------------------------------------ running a program

async function runProgram(bus: Bus, program: readonly Op[]): Promise<Log> {
  const log: Log = [];
  const offs: (() => void)[] = [];
  let nextId = 0;
  const off = (target: number): void => {
    if (offs.length > 0) offs[target % offs.length]();
  };
  const add = (spec: Spec, actions: readonly Action[]): void => {
    const id = nextId++;
    const fn = (...args: unknown[]): unknown => {
      log.push(`call ${id}`);
      for (const a of actions) {
        if (a.kind === 'on') add(a.spec, []);
        else off(a.target);
      }
      const value = args.length > 0 ? `${String(args[0])}>${id}` : undefined;
      return spec.async ? Promise.resolve(value) : value;
    };
    const d = bus.on(spec, fn);
    if (d !== undefined) offs.push(d);
  };
  for (const op of program) {
    switch (op.op) {
      case 'on':
        add(op.spec, op.actions);
        break;
      case 'off':
        off(op.target);
        break;
      case 'dispose-scope':
        await bus.disposeScope(op.scope);
        break;
      case 'dispatch': {
        const one = (tag: string): Promise<unknown> => (op.waterfall ? bus.waterfall(op.name, op.scope, tag) : bus.emit(op.name, op.scope));
        const results = op.concurrent ? await Promise.all([one('x'), one('y')]) : [await one('x')];
        for (const r of results) log.push(`result ${String(r)}`);
        break;
      }
      case 'count':
        log.push(bus.count(op.name, op.scope));
        break;
    }
  }
  return log;
}

test('the scope-indexed bus dispatches exactly like one filtered copy-on-write list per name', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { maxLength: 40 }), async (program) => {
      const server = new Server();
      server.addPlugins({ id: 'events', build: (s) => void installEvents(s) });
      await server.finish();
      const app = server.createContext();
      const real = await runProgram(new RealBus(server, app), program);
      const model = await runProgram(new ModelBus(), program);
      await server.dispose();
      expect(real).toEqual(model);
    }),
    { numRuns: 300 },
  );
});

test('prepend and registration order interleave across unscoped, global and scoped listeners in one dispatch', async () => {
  const server = new Server();
  server.addPlugins({ id: 'events', build: (s) => void installEvents(s) });
  await server.finish();
  const app = server.createContext();
  const k = createScope(app, { id: 'k' });
  const other = createScope(app, { id: 'other' });
  const heard: string[] = [];
  const on = (ctx: SystemContext, label: string, options?: { global?: boolean; prepend?: boolean }): void =>
    void ctx.get(Events).on('e', () => void heard.push(label), options);
  on(k.ctx, 'k1');
  on(app, 'u1');
  on(other.ctx, 'g1', { global: true });
  on(other.ctx, 'other1');
  on(k.ctx, 'k2');
  on(app, 'u0', { prepend: true });
  on(k.ctx, 'k0', { prepend: true });
  on(app, 'u2');
  await app.get(Events).emit(k.key, 'e');
  expect(heard).toEqual(['k0', 'u0', 'k1', 'u1', 'g1', 'k2', 'u2']);
  heard.length = 0;
  await app.get(Events).emit(undefined, 'e');
  expect(heard).toEqual(['u0', 'u1', 'g1', 'u2']);
  await server.dispose();
});
