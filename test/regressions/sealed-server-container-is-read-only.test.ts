/**
 * Issue 8, "Authority that should not leak" (SPEC §10.7, last bullet). Bug: after
 * `finish()`, `server.container` still accepted `bind`, `unbind`, `rebind`,
 * `onActivation`, `onDeactivation` (and modules, snapshots, plugins): any turn was one
 * property away from rebinding the app's services or running their deactivation.
 * Fixed: after finish() it is read-only: get, getAsync, getAll, getAllAsync, isBound and
 * isCurrentBound work (`autobind: true` is refused); every other method throws a
 * ServerError saying the server is sealed (the async ones reject with it), and
 * `server.dispose()` still unbinds it.
 */
import { ContainerModule, injectable } from 'inversify';
import { Server, ServerError } from '../../src/index.js';

@injectable()
class Llm {
  readonly id = Math.random();
}
@injectable()
class Unbound {}

async function sealed(): Promise<{ server: Server; deactivated: string[] }> {
  const deactivated: string[] = [];
  const server = new Server();
  server.container.bind(Llm).toSelf().inSingletonScope().onDeactivation(() => void deactivated.push('llm'));
  await server.finish();
  return { server, deactivated };
}

const SEALED = /server\.container\.\w+\(\) was called after finish\(\): the server is sealed/;

test('every mutating method throws a ServerError saying the server is sealed; nothing changes', async () => {
  const { server } = await sealed();
  const c = server.container;
  const llm = c.get(Llm);
  const calls: [string, () => unknown][] = [
    ['bind', () => c.bind(Unbound).toSelf()],
    ['unbind', () => c.unbind(Llm)],
    ['unbindAll', () => c.unbindAll()],
    ['rebind', () => c.rebind(Llm).toConstantValue(new Llm())],
    ['onActivation', () => c.onActivation(Llm, (_x, v) => v)],
    ['onDeactivation', () => c.onDeactivation(Llm, () => undefined)],
    ['load', () => c.load(new ContainerModule(() => undefined))],
    ['unload', () => c.unload(new ContainerModule(() => undefined))],
    ['snapshot', () => c.snapshot()],
    ['restore', () => c.restore()],
    ['register', () => c.register(class {} as never)],
  ];
  for (const [name, call] of calls) {
    let err: unknown;
    try {
      call();
    } catch (e) {
      err = e;
    }
    expect([name, err]).toEqual([name, expect.any(ServerError)]);
    expect((err as Error).message).toMatch(SEALED);
    expect((err as Error).message).toContain(`server.container.${name}()`);
  }
  expect(c.isBound(Unbound)).toBe(false);
  expect(c.get(Llm)).toBe(llm);
  await server.dispose();
});

test('the async mutating methods reject with the same ServerError', async () => {
  const { server } = await sealed();
  const c = server.container;
  const calls: [string, () => Promise<unknown>][] = [
    ['unbindAsync', () => c.unbindAsync(Llm)],
    ['unbindAllAsync', () => c.unbindAllAsync()],
    ['rebindAsync', () => c.rebindAsync(Llm)],
    ['loadAsync', () => c.loadAsync(new ContainerModule(() => undefined))],
    ['unloadAsync', () => c.unloadAsync(new ContainerModule(() => undefined))],
  ];
  for (const [name, call] of calls) {
    let p: Promise<unknown> | undefined;
    expect(() => (p = call())).not.toThrow();
    await expect(p).rejects.toThrow(ServerError);
    await expect(call()).rejects.toThrow(`server.container.${name}() was called after finish(): the server is sealed`);
  }
  expect(c.isBound(Llm)).toBe(true);
  await server.dispose();
});

test('resolution works; autobind is refused', async () => {
  const { server } = await sealed();
  const c = server.container;
  const llm = c.get(Llm);
  expect(await c.getAsync(Llm)).toBe(llm);
  expect(c.getAll(Llm)).toEqual([llm]);
  expect(await c.getAllAsync(Llm)).toEqual([llm]);
  expect(c.isBound(Llm)).toBe(true);
  expect(c.isCurrentBound(Llm)).toBe(true);
  expect(server.createContext().child().get(Llm)).toBe(llm);
  expect(() => c.get(Unbound, { autobind: true })).toThrow(ServerError);
  expect(() => c.get(Unbound, { autobind: true })).toThrow(/autobind: true.*the server is sealed/);
  await expect(c.getAsync(Unbound, { autobind: true })).rejects.toThrow(ServerError);
  expect(c.isBound(Unbound)).toBe(false);
  await server.dispose();
});

test('before finish() the container is fully usable; server.dispose() still unbinds it after', async () => {
  const server = new Server();
  server.container.bind(Unbound).toSelf();
  server.container.unbind(Unbound);
  server.container.load(new ContainerModule(({ bind }) => void bind(Unbound).toSelf()));
  expect(server.container.isBound(Unbound)).toBe(true);
  const deactivated: string[] = [];
  server.container.bind(Llm).toSelf().inSingletonScope().onDeactivation(() => void deactivated.push('llm'));
  await server.finish();
  server.container.get(Llm);
  await server.dispose();
  expect(deactivated).toEqual(['llm']);
  expect(server.container.isBound(Llm)).toBe(false);
});
