/**
 * Issue 8 #12. Bug: an object held as a local by several contexts that are not each
 * other's ancestors was disposed by each of them: the same disposable inserted into two
 * sibling contexts, or one object a `registerLocal` factory returns for every root.
 * Fixed: a disposable local is counted once per holding entry; only the last live holder
 * disposes it, and polestar never disposes an object twice.
 */
import { Server, token } from '../../src/index.js';

class Conn {
  closed = 0;
  async [Symbol.asyncDispose](): Promise<void> {
    this.closed++;
  }
}
const CONN = token<Conn>('CONN');
const ALIAS = token<Conn>('ALIAS');

test('the same disposable inserted into two sibling contexts is disposed once, by the last of them', async () => {
  const server = new Server();
  await server.finish();
  const session = server.createContext().child();
  const a = session.child();
  const b = session.child();
  const conn = new Conn();
  a.insert(CONN, conn);
  b.insert(CONN, conn);
  b.insert(ALIAS, conn);
  await a.dispose();
  expect(conn.closed).toBe(0); // b still holds it
  await b.dispose();
  expect(conn.closed).toBe(1);
  await server.dispose();
  expect(conn.closed).toBe(1);
});

test('one object a registerLocal factory returns for every root is disposed once', async () => {
  const shared = new Conn();
  const server = new Server();
  server.registerLocal(CONN, () => shared);
  await server.finish();
  const roots = [server.createContext(), server.createContext(), server.createContext()];
  await roots[0].dispose();
  expect(shared.closed).toBe(0);
  await server.dispose();
  expect(shared.closed).toBe(1);
});

test('an object disposed by its last holder and inserted again later is not disposed a second time', async () => {
  const server = new Server();
  await server.finish();
  const conn = new Conn();
  const a = server.createContext();
  a.insert(CONN, conn);
  await a.dispose();
  const b = server.createContext();
  b.insert(CONN, conn);
  await b.dispose();
  expect(conn.closed).toBe(1);
  await server.dispose();
});

test('a local removed from one holder stays owned by the other; removed from all, it belongs to the caller', async () => {
  const server = new Server();
  await server.finish();
  const app = server.createContext();
  const a = app.child();
  const b = app.child();
  const kept = new Conn();
  const taken = new Conn();
  a.insert(CONN, kept);
  b.insert(CONN, kept);
  expect(a.remove(CONN)).toBe(kept);
  a.insert(ALIAS, taken);
  expect(a.remove(ALIAS)).toBe(taken);
  await server.dispose();
  expect(kept.closed).toBe(1);
  expect(taken.closed).toBe(0);
});
