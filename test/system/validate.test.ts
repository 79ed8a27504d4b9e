import 'reflect-metadata';
import { Out, out, Res, res, ResMut, resMut, Server, system, token, validate } from '../../src/index.js';
import { AppConfig, ConversationHistory, Scratchpad, setup } from './helpers.js';

const Count = token<number>('Count');
const Missing = token<string>('Missing');

test('validate returns every missing parameter at once, in declaration order', async () => {
  const { server, ctx } = await setup();
  const child = ctx.child();
  const sys = system([Res(AppConfig), Res(Missing), ResMut(Scratchpad), Out(Count), Res(ConversationHistory, { optional: true }), Out(Missing, { optional: true })], () => 1);
  // AppConfig is a global (read ok); Scratchpad is only in the parent (write missing)
  expect(validate(sys, child)).toEqual([
    { token: Missing, access: 'read' },
    { token: Scratchpad, access: 'write' },
    { token: Count, access: 'output' },
  ]);
  // on the root, Scratchpad is an own local
  expect(validate(sys, ctx)).toEqual([
    { token: Missing, access: 'read' },
    { token: Count, access: 'output' },
  ]);
  ctx.insert(Missing, 'm');
  ctx.outputs.insert(Count, 1);
  expect(validate(sys, ctx)).toEqual([]);
  // outputs are never inherited
  expect(validate(sys, child)).toEqual([
    { token: Scratchpad, access: 'write' },
    { token: Count, access: 'output' },
  ]);
  await server.dispose();
});

test('validate accepts decorated methods and rejects non-systems', async () => {
  const { server, ctx } = await setup();
  class S {
    @system()
    static run(@res(Missing) _m: string, @resMut(ConversationHistory) _h: ConversationHistory, @out(Count) _c: number) {}
  }
  expect(validate(S.run, ctx).map((m) => m.access)).toEqual(['read', 'write', 'output']);
  expect(() => validate((() => 1) as never, ctx)).toThrow(/is not a system/);
  await server.dispose();
});

test('validate finds globals bound in server.container', async () => {
  class Llm {}
  class Cache {}
  const server = new Server();
  server.container.bind(Llm).toSelf().inSingletonScope();
  server.container.bind(Cache).toSelf().inSingletonScope();
  await server.finish();
  const ctx = server.createContext();
  expect(validate(system([Res(Llm), ResMut(Cache)], () => 1), ctx)).toEqual([{ token: Cache, access: 'write' }]);
  await server.dispose();
});
