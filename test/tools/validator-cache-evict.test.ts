/**
 * A schema template outliving its LRU-evicted validator record: the next registration
 * re-interns it, the one after retains it; in-place mutation after registration changes
 * nothing registered; a second server sharing the raw object keeps its own validator.
 */
import { Tools } from '../../src/index.js';
import { RELEASED_VALIDATORS_MAX } from '../../src/tools/schema/validator-cache.js';
import { toolRegistryOf } from '../../src/tools/tools.js';
import { tool, toolServer } from './helpers.js';

const must = <T>(v: T | undefined): T => {
  if (v === undefined) throw new Error('expected a value');
  return v;
};

test('evicted record, surviving template, in-place mutation, second server', async () => {
  const one = await toolServer();
  const two = await toolServer();
  // Standard Schema fillers: they take validator records but never templates, so the template of `raw` survives
  const fillers = Array.from({ length: RELEASED_VALIDATORS_MAX + 1 }, (_, i) => {
    const js = { type: 'object', properties: { [`f${i}`]: { type: 'string' } } };
    return { '~standard': { version: 1, vendor: 't', jsonSchema: { input: () => js, output: () => js } } } as never;
  });
  const raw: any = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
  const offA = one.app.get(Tools).register(tool('a', () => 'x', { parameters: raw }));
  const offB = two.app.get(Tools).register(tool('b', () => 'x', { parameters: raw }));
  offA();
  for (const p of fillers) one.app.get(Tools).register(tool(`v${fillers.indexOf(p)}`, () => 'x', { parameters: p }))(); // evicts a's record
  const reg = must(toolRegistryOf(one.server));
  one.app.get(Tools).register(tool('a2', () => 'x', { parameters: raw })); // template hit, record evicted: re-interned
  one.app.get(Tools).register(tool('a3', () => 'x', { parameters: raw })); // retain fast path
  raw.properties.q.type = 'number'; // after registration: no effect on a2/a3/b
  const a2 = must(one.app.get(Tools).get('a2'));
  const a3 = must(one.app.get(Tools).get('a3'));
  expect(a2.parameters).toBe(a3.parameters);
  expect(reg.validate(a2, { q: 'x' })).toBeUndefined();
  expect(reg.validate(a3, { q: 1 })).toMatch(/string/);
  expect(reg.validatorCount).toBe(1);
  one.app.get(Tools).register(tool('a4', () => 'x', { parameters: raw })); // changed: its own validator
  expect(reg.validatorCount).toBe(2);
  expect(reg.validate(must(one.app.get(Tools).get('a4')), { q: 1 })).toBeUndefined();
  expect(must(toolRegistryOf(two.server)).validate(must(two.app.get(Tools).get('b')), { q: 'x' })).toBeUndefined();
  offB();
  await one.server.dispose();
  await two.server.dispose();
  expect(reg.validatorCount).toBe(0);
  expect(must(toolRegistryOf(two.server)).validatorCount).toBe(0);
});

test('the validator a call used last, evicted and re-interned for the same parameters: later calls check with the new one', async () => {
  const { server, app } = await toolServer();
  const tools = app.get(Tools);
  const fillers = Array.from({ length: RELEASED_VALIDATORS_MAX + 1 }, (_, i) => {
    const js = { type: 'object', properties: { [`f${i}`]: { type: 'string' } } };
    return { '~standard': { version: 1, vendor: 't', jsonSchema: { input: () => js, output: () => js } } } as never;
  });
  const raw = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
  const offA = tools.register(tool('a', () => 'ran', { parameters: raw }));
  expect((await tools.execute({ callId: 'c1', name: 'a', arguments: { q: 'x' } })).content).toBe('ran'); // its validator is the last used
  const before = must(tools.get('a')).parameters;
  offA();
  for (const [i, p] of fillers.entries()) tools.register(tool(`v${i}`, () => 'x', { parameters: p }))(); // evicts a's record (no call in between)
  tools.register(tool('a2', () => 'ran again', { parameters: raw })); // the template's parameters, re-interned
  expect(must(tools.get('a2')).parameters).toBe(before);
  const ok = await tools.execute({ callId: 'c2', name: 'a2', arguments: { q: 'x' } });
  expect(ok).toEqual({ callId: 'c2', content: 'ran again', isError: false, output: 'ran again' });
  const bad = await tools.execute({ callId: 'c3', name: 'a2', arguments: { q: 1 } });
  expect(bad.error?.code).toBe('INVALID_ARGS');
  expect(bad.content).toMatch(/arguments\/q must be string/);
  await server.dispose();
});
