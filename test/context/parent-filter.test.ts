/**
 * SPEC §10.4 parent filters (contract C4) on `ctx.child({ parentFilter })` and
 * `createScope(ctx, key, { parentFilter })`.
 */
import { injectable, inject } from 'inversify';
import {
  createScope, ParamError, ParentFilter, Res, ResMut, Server, system, token, validate, type SystemContext,
} from '../../src/index.js';

class Memory {
  constructor(readonly owner: string) {}
}
class Llm {}
const SECRET = token<string>('SECRET');
const PUBLIC = token<string>('PUBLIC');
const SHARED = token<string>('SHARED');

async function world(): Promise<{ server: Server; parent: SystemContext }> {
  const server = new Server();
  server.insertGlobal(SHARED, 'global shared');
  await server.finish();
  const parent = server.createContext();
  parent.insert(new Memory('parent'));
  parent.insert(new Llm());
  parent.insert(SECRET, 'customer 4711 is under fraud investigation');
  parent.insert(PUBLIC, 'opening hours');
  parent.insert(SHARED, 'parent shared');
  return { server, parent };
}

test('allowOnly: only the listed tokens cross to the parent; walks from below the filter are gated too', async () => {
  const { server, parent } = await world();
  const sub = parent.child({ parentFilter: ParentFilter.allowOnly([Llm, PUBLIC]) });
  const turn = sub.child().child();
  for (const c of [sub, turn]) {
    expect(c.get(Llm)).toBe(parent.get(Llm));
    expect(c.get(PUBLIC)).toBe('opening hours');
    expect(c.has(SECRET)).toBe(false);
    expect(c.tryGet(SECRET)).toBeUndefined();
    expect(c.tryGet(Memory)).toBeUndefined();
  }
  await server.dispose();
});

test('allowAllExcept: every token but the listed ones crosses', async () => {
  const { server, parent } = await world();
  const sub = parent.child({ parentFilter: ParentFilter.allowAllExcept([SECRET, Memory]) });
  expect(sub.get(Llm)).toBe(parent.get(Llm));
  expect(sub.get(PUBLIC)).toBe('opening hours');
  expect(sub.has(SECRET)).toBe(false);
  expect(sub.has(Memory)).toBe(false);
  await server.dispose();
});

test('a blocked token falls through to the globals; own and descendants’ locals are always reachable', async () => {
  const { server, parent } = await world();
  const sub = parent.child({ parentFilter: ParentFilter.allowOnly([]) });
  expect(sub.get(SHARED)).toBe('global shared');
  sub.insert(SECRET, 'mine');
  expect(sub.get(SECRET)).toBe('mine');
  const turn = sub.child();
  turn.insert(new Memory('turn'));
  expect(turn.get(Memory).owner).toBe('turn');
  expect(turn.get(SECRET)).toBe('mine');
  expect(sub.getMut(SECRET)).toBe('mine');
  await server.dispose();
});

test('ResourceOutOfScope only when no global has it and an ancestor above the filter does; otherwise ResourceNotFound', async () => {
  const { server, parent } = await world();
  const agent = parent.child();
  const sub = createScope(agent, { id: 'billing' }, { parentFilter: ParentFilter.allowOnly([Llm]) }).ctx;
  const turn = sub.child();
  let err: unknown;
  try {
    turn.get(SECRET);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ParamError);
  expect((err as ParamError).kind).toBe('ResourceOutOfScope');
  expect((err as ParamError).token).toBe(SECRET);
  expect((err as Error).message).toBe(
    'resource out of scope: SECRET (the context at depth 0 holds it, but the parent filter ParentFilter.allowOnly([Llm]) on the ' +
      'context at depth 2 (scope billing) above this context at depth 3 (scope billing) blocks it (and no global has it); to let ' +
      'it through, add SECRET to the filter\'s tokens (ParentFilter.allowOnly([..., SECRET])), or insert it into a context below ' +
      'the filter or as a global)',
  );
  const except = parent.child({ parentFilter: ParentFilter.allowAllExcept([Memory]) });
  expect(() => except.get(Memory)).toThrow(/^resource out of scope: Memory .*remove Memory from ParentFilter\.allowAllExcept/);
  const NOWHERE = token<number>('NOWHERE');
  expect(() => turn.get(NOWHERE)).toThrow(/^resource not found: NOWHERE/);
  expect((() => {
    try {
      turn.get(NOWHERE);
    } catch (e) {
      return (e as ParamError).kind;
    }
  })()).toBe('ResourceNotFound');
  await server.dispose();
});

test('nested filters: each one gates the walk across its own context', async () => {
  const { server, parent } = await world();
  const a = parent.child({ parentFilter: ParentFilter.allowAllExcept([SECRET]) });
  a.insert(new Memory('a'));
  const b = a.child({ parentFilter: ParentFilter.allowOnly([Memory, SECRET, Llm]) });
  expect(b.get(Memory).owner).toBe('a');
  expect(b.get(Llm)).toBe(parent.get(Llm));
  expect(() => b.get(SECRET)).toThrow(/out of scope: SECRET .*ParentFilter.allowAllExcept\(\[SECRET\]\) on the context at depth 1/);
  expect(b.has(PUBLIC)).toBe(false);
  await server.dispose();
});

test('systems, validate and ctx.resolve follow the filter', async () => {
  const { server, parent } = await world();
  const sub = parent.child({ parentFilter: ParentFilter.allowOnly([Llm]) });
  const readSecret = system([Res(SECRET)], (s) => s, { name: 'readSecret' });
  const readLlm = system([Res(Llm)], (l) => l, { name: 'readLlm' });
  await expect(sub.run(readSecret)).rejects.toThrow(/resource out of scope: SECRET/);
  await expect(sub.run(readLlm)).resolves.toBe(parent.get(Llm));
  expect(validate(readSecret, sub)).toEqual([{ token: SECRET, access: 'read' }]);
  expect(validate(system([ResMut(Llm)], () => 1), sub)).toEqual([{ token: Llm, access: 'write' }]);
  expect(validate(readLlm, sub)).toEqual([]);
  @injectable()
  class NeedsSecret {
    constructor(@inject(SECRET) readonly secret: string) {}
  }
  expect(() => sub.resolve(NeedsSecret)).toThrow(/SECRET/);
  expect(parent.child().resolve(NeedsSecret).secret).toMatch(/fraud/);
  await server.dispose();
});

test('ParentFilter: frozen, de-duplicated, validated; bad parentFilter options are refused', async () => {
  const f = ParentFilter.allowOnly(new Set([Llm, Llm, SECRET]));
  expect(f.kind).toBe('allowOnly');
  expect(f.tokens).toEqual([Llm, SECRET]);
  expect(Object.isFrozen(f)).toBe(true);
  expect(Object.isFrozen(f.tokens)).toBe(true);
  expect(f.allows(Llm)).toBe(true);
  expect(f.allows(PUBLIC)).toBe(false);
  expect(String(ParentFilter.allowAllExcept([SECRET]))).toBe('ParentFilter.allowAllExcept([SECRET])');
  expect(() => ParentFilter.allowOnly('Llm' as never)).toThrow(/tokens must be an array \(or any iterable\) of tokens/);
  expect(() => ParentFilter.allowOnly([Llm, 'x' as never])).toThrow(/ParentFilter.allowOnly\(tokens\) at index 1: expected a token/);
  const { server, parent } = await world();
  expect(() => parent.child({ parentFilter: { allows: () => true } as never })).toThrow(/parentFilter must be made by ParentFilter.allowOnly/);
  expect(() => parent.child(null as never)).toThrow(/options must be an object/);
  expect(() => createScope(parent, {}, { parentFilter: [Llm] as never })).toThrow(/parentFilter must be made by/);
  expect(parent.child({}).get(Llm)).toBe(parent.get(Llm));
  await server.dispose();
});
