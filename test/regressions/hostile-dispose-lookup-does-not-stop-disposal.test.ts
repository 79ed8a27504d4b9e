/**
 * Issue 8 #9. Bug: a local or global whose `Symbol.asyncDispose` / `Symbol.dispose`
 * *lookup* throws (a strict mock, a revoked proxy, an ORM proxy) stopped the whole
 * disposal: the other values were never disposed and `server.container` was never
 * unbound. And `insert` of such a value threw *after* storing it.
 * Fixed: such a value is refused by `insert` / `insertGlobal` before anything is stored;
 * a lookup that starts throwing later is collected into the disposal's AggregateError
 * and the disposal goes on.
 */
import { injectable } from 'inversify';
import { Server, token } from '../../src/index.js';

class Closable {
  closed = 0;
  [Symbol.dispose](): void {
    this.closed++;
  }
}

/** A strict mock: any property it was not told about throws. */
function strictMock(): object {
  return new Proxy({}, {
    get(_t, key) {
      throw new Error(`strict mock: unexpected read of ${String(key)}`);
    },
  });
}

/** Disposable at first; its lookups throw once `revoke()` was called. */
function revocable(): { value: object; revoke: () => void } {
  const target = new Closable();
  const { proxy, revoke } = Proxy.revocable(target, {});
  return { value: proxy, revoke };
}

const T = token<object>('T');
const A = token<Closable>('A');
const B = token<Closable>('B');

test('insert of a value whose dispose lookup throws is refused before anything is stored', async () => {
  const server = new Server();
  await server.finish();
  const ctx = server.createContext();
  const first = new Closable();
  ctx.insert(T, first);
  expect(() => ctx.insert(T, strictMock())).toThrow(TypeError);
  expect(() => ctx.insert(T, strictMock())).toThrow(/Symbol\.asyncDispose \/ Symbol\.dispose .* threw \(strict mock: unexpected read of Symbol\(.*asyncDispose\)\).*nothing was stored/);
  expect(ctx.get(T)).toBe(first);
  const other = server.createContext();
  expect(() => other.insert(T, strictMock())).toThrow(TypeError);
  expect(other.hasLocal(T)).toBe(false);
  await server.dispose();
  expect(first.closed).toBe(1);
});

test('insertGlobal of such a value is refused before anything is stored', async () => {
  const server = new Server();
  expect(() => server.insertGlobal(T, strictMock())).toThrow(/insertGlobal\(T\): looking up Symbol\.asyncDispose .* threw .*nothing was stored/);
  expect(server.hasGlobal(T)).toBe(false);
  await server.finish();
  await server.dispose();
});

test('a local whose lookup throws at disposal time: the error is collected, the other locals and cleanups still run', async () => {
  const server = new Server();
  await server.finish();
  const ctx = server.createContext();
  const a = new Closable();
  const b = new Closable();
  const r = revocable();
  const ran: string[] = [];
  ctx.insert(A, a);
  ctx.insert(T, r.value);
  ctx.insert(B, b);
  ctx.onDispose(() => void ran.push('cleanup'));
  r.revoke();
  const err = (await ctx.dispose().then(() => undefined, (e: unknown) => e)) as AggregateError;
  expect(err).toBeInstanceOf(AggregateError);
  expect(err.errors).toHaveLength(1);
  expect(String(err.errors[0])).toMatch(/revoked/);
  expect(ran).toEqual(['cleanup']);
  expect([a.closed, b.closed]).toEqual([1, 1]);
  expect(server.liveContexts).toBe(0);
  await server.dispose();
});

test('a global whose lookup throws at disposal time: the other globals are disposed and the container is still unbound', async () => {
  @injectable()
  class Db {}
  const deactivated: string[] = [];
  const server = new Server();
  const a = new Closable();
  const b = new Closable();
  const r = revocable();
  server.insertGlobal(A, a);
  server.insertGlobal(T, r.value);
  server.insertGlobal(B, b);
  server.container.bind(Db).toSelf().inSingletonScope().onDeactivation(() => void deactivated.push('db'));
  await server.finish();
  server.createContext().get(Db);
  r.revoke();
  const err = (await server.dispose().then(() => undefined, (e: unknown) => e)) as AggregateError;
  expect(err).toBeInstanceOf(AggregateError);
  expect(err.errors).toHaveLength(1);
  expect(String(err.errors[0])).toMatch(/revoked/);
  expect([a.closed, b.closed]).toEqual([1, 1]);
  expect(deactivated).toEqual(['db']);
});
