import { ContextView, Events, Server, ServerError, type Plugin } from '../../src/index.js';
import { definePlugin } from '../../src/registry/define-plugin.js';
import { probe } from '../../src/testing/probe.js';

class Counter {
  live: string[] = [];
  constructor(readonly made: number) {}
}
class CounterView extends ContextView<Counter> {
  get made(): number {
    return this.registry.made;
  }
}
class ReusedView extends ContextView<Counter> {}
class HintedView extends ContextView<Counter> {}

let made = 0;
const refusing = definePlugin<Counter, CounterView>({
  plugin: 'CounterPlugin',
  token: CounterView,
  view: (c) => (ctx) => new CounterView(c, ctx),
  leaks: (c) => c.live,
});
const reusing = definePlugin<Counter, ReusedView>({ plugin: 'ReusedPlugin', token: ReusedView, view: (c) => (ctx) => new ReusedView(c, ctx), once: 'reuse' });
definePlugin<Counter, HintedView>({
  plugin: 'HintedPlugin',
  token: HintedView,
  view: (c) => (ctx) => new HintedView(c, ctx),
  installedBy: 'server.addPlugins(new HintedPlugin())',
});

const plugin = (id: string, build: (s: Server) => void): Plugin => ({ id, build });

test('install makes one instance per server, a view of it per context, the shared Events and the leak probe', async () => {
  const server = new Server().addPlugins(plugin('counter', (s) => void refusing.install(s, () => new Counter(++made))));
  const other = new Server().addPlugins(plugin('counter', (s) => void refusing.install(s, () => new Counter(++made))));
  expect(refusing.of(server)).toBeUndefined();
  await server.finish();
  await other.finish();
  const instance = refusing.of(server) as Counter;
  expect(instance).toBeInstanceOf(Counter);
  expect(refusing.of(other)).not.toBe(instance);
  const a = server.createContext();
  const b = server.createContext();
  expect(a.get(CounterView)).toBe(a.get(CounterView)); // made once per context
  expect(a.get(CounterView)).not.toBe(b.get(CounterView));
  expect(a.get(CounterView).context).toBe(a);
  expect(a.get(CounterView).made).toBe(instance.made);
  expect(server.hasGlobal(Events)).toBe(true);

  instance.live.push('counter of scope A');
  expect(probe.registrationLeaks(server)).toContain('counter of scope A');
  await server.dispose();
  await other.dispose();
});

test("'refuse' makes a global already under the token a ServerError; 'reuse' keeps the first instance", async () => {
  const taken = new Server().addPlugins(plugin('counter', (s) => void refusing.install(s, () => new Counter(++made))));
  taken.insertGlobalView(CounterView, (ctx) => new CounterView(new Counter(0), ctx));
  const err = await taken.finish().catch((e: unknown) => e);
  expect((err as Error).cause).toEqual(
    new ServerError('CounterPlugin: a global of token CounterView already exists; add CounterPlugin once and do not insert CounterView by hand.'),
  );
  expect((err as Error).cause).toBeInstanceOf(ServerError);
  await taken.dispose();

  const instances: Counter[] = [];
  const build = (s: Server): void => void instances.push(reusing.install(s, () => new Counter(++made)));
  const server = new Server().addPlugins(plugin('first', build), plugin('second', build));
  await server.finish();
  expect(instances).toHaveLength(2);
  expect(instances[1]).toBe(instances[0]);
  expect(server.createContext().get(ReusedView)).toBeInstanceOf(ReusedView);
  await server.dispose();
});

test('installedBy names the plugin when its token is missing', async () => {
  const server = new Server();
  await server.finish();
  expect(() => server.createContext().get(HintedView)).toThrow(/it is installed by HintedPlugin: call server\.addPlugins\(new HintedPlugin\(\)\) before server\.finish\(\)/);
  expect(() => server.createContext().get(ReusedView)).not.toThrow(/it is installed by/);
  await server.dispose();
});
