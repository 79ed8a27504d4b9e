/**
 * Issue 8 #3. Bug: an object `server.container` made was recorded as the server's only
 * when a context resolved it directly (`ctx.get`, `ctx.resolve`). Reached any other way —
 * injected into another service (`turn.insert(app.get(Repo).db)`), taken from
 * `server.container.get(...)`, returned by a `registerLocal` factory, bound by a loaded
 * `ContainerModule` — and then inserted into a context, it was disposed with that context:
 * a turn disposed the app's database.
 * Fixed: the container records every object it makes (an activation hook per bound
 * service id, modules included, plus the results of its get calls); contexts never
 * dispose those. Every object the container made is the container's.
 */
import { ContainerModule, inject, injectable } from 'inversify';
import { Server, token } from '../../src/index.js';

const log: string[] = [];

@injectable()
class Db {
  static made = 0;
  readonly n = ++Db.made;
  [Symbol.dispose](): void {
    log.push(`Symbol.dispose db${this.n}`);
  }
}

@injectable()
class Repo {
  constructor(@inject(Db) readonly db: Db) {}
}

@injectable()
class Cache {
  async [Symbol.asyncDispose](): Promise<void> {
    log.push('Symbol.asyncDispose cache');
  }
}

const DB = token<Db>('DB');

beforeEach(() => {
  log.length = 0;
});

async function world(configure?: (s: Server) => void): Promise<Server> {
  const server = new Server();
  server.container.bind(Db).toSelf().inSingletonScope().onDeactivation(() => void log.push('deactivate db'));
  server.container.bind(Repo).toSelf().inSingletonScope();
  configure?.(server);
  await server.finish();
  return server;
}

test('turn.insert(app.get(Repo).db): a dependency the container injected is never disposed by the turn', async () => {
  const server = await world();
  const app = server.createContext();
  const turn = app.child();
  const db = app.get(Repo).db;
  turn.insert(db);
  turn.insert(DB, db);
  await turn.dispose();
  await app.dispose();
  expect(log).toEqual([]);
  await server.dispose();
  expect(log).toEqual(['deactivate db']);
});

test('a value taken from server.container.get(...) and inserted is never disposed by the context', async () => {
  const server = await world();
  const turn = server.createContext().child();
  turn.insert(server.container.get(Db));
  await turn.dispose();
  expect(log).toEqual([]);
  await server.dispose();
  expect(log).toEqual(['deactivate db']);
});

test('a registerLocal factory returning a container-made object: no root disposes it', async () => {
  const server = await world((s) => s.registerLocal(DB, () => s.container.get(Db)));
  const a = server.createContext();
  const b = server.createContext();
  expect(a.get(DB)).toBe(b.get(DB));
  await a.dispose();
  await b.dispose();
  expect(log).toEqual([]);
  await server.dispose();
  expect(log).toEqual(['deactivate db']);
});

test('transient and module-bound services, sync and async activation: none is disposed by a context', async () => {
  const CACHE = token<Cache>('CACHE');
  const server = await world((s) => {
    s.container.load(new ContainerModule(({ bind }) => void bind(Cache).toSelf()));
    s.container.bind(CACHE).toDynamicValue(async () => new Cache());
  });
  const app = server.createContext();
  const turn = app.child();
  turn.insert(server.container.get(Cache));
  turn.insert(CACHE, await server.container.getAsync(CACHE));
  turn.insert(token<Cache>('resolved'), await app.resolveAsync(Cache));
  await turn.dispose();
  expect(log).toEqual([]);
  await server.dispose();
});

test('an object the context built itself (not through server.container) is still the context’s own', async () => {
  const server = await world();
  const turn = server.createContext().child();
  turn.insert(new Db());
  await turn.dispose();
  expect(log).toEqual([`Symbol.dispose db${Db.made}`]);
  await server.dispose();
});
