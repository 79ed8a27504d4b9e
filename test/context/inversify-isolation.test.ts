/**
 * Isolation stronger than inversify's child containers.
 *
 * Each case first pins the hazard with raw inversify 8 child containers (so the test
 * documents it, and fails if inversify changes), then shows that polestar's context API
 * can not reach it: a child context never replaces, deactivates, wraps or disposes
 * anything an ancestor (or the server) owns.
 */
import 'reflect-metadata';
import { Container, inject, injectable } from 'inversify';
import { Server, token } from '../../src/index.js';

@injectable()
class Db {
  closed = 0;
  wrapped = false;
}

const REGION = token<string>('REGION');

@injectable()
class RegionClient {
  constructor(@inject(REGION) readonly region: string) {}
}

async function serverWithDb(configure?: (server: Server) => void) {
  const deactivations: Db[] = [];
  const server = new Server();
  server.container
    .bind(Db)
    .toSelf()
    .inSingletonScope()
    .onDeactivation((db) => {
      db.closed++;
      deactivations.push(db);
    });
  // SPEC §10.7: server.container is read-only after finish(), so bindings and hooks go here.
  configure?.(server);
  await server.finish();
  const agent = server.createContext();
  const session = agent.child();
  return { server, agent, session, deactivations };
}

describe('hazard 1: a child unbinding or rebinding an id it does not own', () => {
  test('inversify: child.unbind(id bound only in the parent) runs the parent singleton deactivation; the parent keeps serving the closed instance and deactivates it again later', () => {
    const parent = new Container();
    const closed: Db[] = [];
    parent.bind(Db).toSelf().inSingletonScope().onDeactivation((db) => {
      db.closed++;
      closed.push(db);
    });
    const shared = parent.get(Db);
    const child = new Container({ parent });
    child.unbind(Db);
    expect(shared.closed).toBe(1);
    expect(parent.get(Db)).toBe(shared);
    const child2 = new Container({ parent });
    child2.rebind(Db).toConstantValue(new Db());
    expect(shared.closed).toBe(2);
    parent.unbindAll();
    expect(shared.closed).toBe(3);
  });

  test('polestar: remove/insert of a server singleton token from a context never deactivates or replaces it for others', async () => {
    const { server, agent, session, deactivations } = await serverWithDb();
    const shared = session.get(Db);
    const turn = session.child();
    expect(turn.remove(Db)).toBeUndefined();
    const mine = new Db();
    expect(turn.insert(mine)).toBeUndefined();
    expect(turn.get(Db)).toBe(mine);
    expect(turn.remove(Db)).toBe(mine);
    turn.insert(Db, new Db());
    expect(session.get(Db)).toBe(shared);
    expect(agent.child().get(Db)).toBe(shared);
    expect(server.getGlobal(Db)).toBe(shared);
    await turn.dispose();
    await agent.dispose();
    expect(shared.closed).toBe(0);
    expect(deactivations).toEqual([]);
    await server.dispose();
    expect(deactivations).toEqual([shared]);
    expect(shared.closed).toBe(1);
  });
});

describe('hazard 2: a child wrapping a parent singleton for everyone', () => {
  test('inversify: child.onActivation(id) wraps the parent singleton, and every other resolver sees the wrapped one', () => {
    const parent = new Container();
    parent.bind(Db).toSelf().inSingletonScope();
    const child = new Container({ parent });
    child.onActivation(Db, (_ctx, db) => {
      db.wrapped = true;
      return db;
    });
    const seenByChild = child.get(Db);
    expect(parent.get(Db)).toBe(seenByChild);
    expect(parent.get(Db).wrapped).toBe(true);
    expect(new Container({ parent }).get(Db).wrapped).toBe(true);
  });

  test('polestar: a context can only shadow, for itself and its descendants; the singleton is activated once, unwrapped, by the server', async () => {
    let activations = 0;
    const { server, session } = await serverWithDb((s) =>
      s.container.onActivation(Db, (_ctx, db) => {
        activations++;
        return db;
      }),
    );
    const turn = session.child();
    const wrapped = Object.assign(new Db(), { wrapped: true });
    turn.insert(Db, wrapped);
    expect(turn.get(Db)).toBe(wrapped);
    expect(turn.child().get(Db)).toBe(wrapped);
    const other = session.child();
    expect(other.get(Db).wrapped).toBe(false);
    expect(session.get(Db)).toBe(other.get(Db));
    expect(server.getGlobal(Db).wrapped).toBe(false);
    expect(activations).toBe(1);
    await server.dispose();
  });
});

describe('hazard 3: a parent singleton first resolved through a child captures the child\'s dependencies', () => {
  test('inversify: the singleton is built with the child binding and every later resolver gets it', () => {
    const parent = new Container();
    parent.bind(REGION).toConstantValue('global');
    parent.bind(RegionClient).toSelf().inSingletonScope();
    const turn = new Container({ parent });
    turn.bind(REGION).toConstantValue('turn-only');
    expect(turn.get(RegionClient).region).toBe('turn-only');
    expect(parent.get(RegionClient).region).toBe('turn-only');
  });

  test('polestar: resolving a server.container singleton from a context that shadows its dependency still builds it from the globals', async () => {
    const server = new Server();
    server.insertGlobal(REGION, 'global');
    server.container.bind(RegionClient).toSelf().inSingletonScope();
    await server.finish();
    const turn = server.createContext().child().child();
    turn.insert(REGION, 'turn-only');
    expect(turn.get(REGION)).toBe('turn-only');
    const client = turn.get(RegionClient);
    expect(client.region).toBe('global');
    expect(server.createContext().get(RegionClient)).toBe(client);
    expect(server.getGlobal(RegionClient).region).toBe('global');
    await server.dispose();
  });

  test('polestar: a transient class bound in server.container also reads its dependencies from the globals, never from the asking context', async () => {
    const server = new Server();
    server.insertGlobal(REGION, 'global');
    server.container.bind(RegionClient).toSelf();
    await server.finish();
    const turn = server.createContext().child();
    turn.insert(REGION, 'turn-only');
    expect(turn.get(RegionClient).region).toBe('global');
    expect(turn.get(RegionClient)).not.toBe(turn.get(RegionClient));
    await server.dispose();
  });
});

describe('hazard 4: tearing down a child container tears down what the parent owns', () => {
  test('inversify: a child container used as a per-turn scope, cleaned up with unbind of a resolved id, deactivates the parent singleton', () => {
    const parent = new Container();
    const closed: string[] = [];
    parent.bind(Db).toSelf().inSingletonScope().onDeactivation(() => void closed.push('db'));
    const turn = new Container({ parent });
    turn.get(Db);
    turn.unbind(Db);
    expect(closed).toEqual(['db']);
  });

  test('polestar: disposing contexts (with any locals, shadows and cleanups) never runs deactivation of server singletons and never disposes a global', async () => {
    @injectable()
    class Conn {
      closed = 0;
      [Symbol.dispose]() {
        this.closed++;
      }
    }
    const { server, agent, session, deactivations } = await serverWithDb((s) => s.container.bind(Conn).toSelf().inSingletonScope());
    const globalDisposed: string[] = [];
    class Pool {
      [Symbol.dispose]() {
        globalDisposed.push('pool');
      }
    }
    // a fresh server so that a disposable global can be inserted before finish()
    const s2 = new Server();
    const pool = new Pool();
    s2.insertGlobal(pool);
    await s2.finish();
    const c2 = s2.createContext();
    const t2 = c2.child();
    t2.insert(token<Pool>('alias'), t2.get(Pool));
    await c2.dispose();
    expect(globalDisposed).toEqual([]);
    await s2.dispose();
    expect(globalDisposed).toEqual(['pool']);

    const shared = session.get(Db);
    for (let i = 0; i < 10; i++) {
      const turn = session.child();
      turn.get(Db);
      turn.insert(Db, new Db());
      turn.insert(token<Db>('alias'), shared);
      turn.onDispose(() => undefined);
      await turn.dispose();
    }
    const conn = session.get(Conn);
    const holder = session.child();
    holder.insert(conn);
    holder.insert(token<Conn>('again'), holder.get(Conn));
    await holder.dispose();
    expect(conn.closed).toBe(0);
    await session.dispose();
    await agent.dispose();
    expect(deactivations).toEqual([]);
    expect(shared.closed).toBe(0);
    await server.dispose();
    expect(deactivations).toEqual([shared]);
  });
});
