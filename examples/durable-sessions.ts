/**
 * Durable sessions example (SPEC §12): a support agent whose conversation lives in an
 * SQLite file. A first "process" (server) creates the session and runs two turns; it is
 * shut down; a second server on the same file resumes the conversation where it stopped,
 * pins a checkpoint, runs a turn that fails (and is rolled back in memory), then rolls the
 * session back to the pinned checkpoint.
 *
 * Run: `npx tsc -p tsconfig.run.json && node .build/examples/durable-sessions.js [--self-test]`
 * (the SQLite file is made in a temporary directory and removed at the end; `--self-test`
 * checks every step and exits non-zero on a mismatch).
 */
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentsPlugin, Events, Server, Sessions, SessionsPlugin, TurnLog, type LocalSerializer, type SessionStore } from 'polestar-di';
import { SqliteSessionStore } from 'polestar-di/sessions/sqlite';

const selfTest = process.argv.includes('--self-test');
const log = (...args: unknown[]): void => {
  if (!selfTest) console.log(...args);
};

/** What the agent remembers about the customer: persisted with every committed turn. */
class CustomerMemory {
  facts: string[] = [];
}
const memorySerializer: LocalSerializer<CustomerMemory> = {
  key: 'support.customer-memory',
  version: 1,
  scope: 'agent',
  serialize: (m) => m.facts,
  deserialize: (data) => Object.assign(new CustomerMemory(), { facts: [...(data as string[])] }),
};

/** One "process": a server whose sessions live in `store`. */
async function startServer(store: SessionStore): Promise<Server> {
  const server = new Server();
  server.registerLocal(CustomerMemory, { per: 'agent' });
  server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, serializers: [[CustomerMemory, memorySerializer]], leaseTtlMs: 5_000 }));
  await server.finish();
  return server;
}

/** A stand-in for a model call: answers from what the agent remembers. */
function reply(memory: CustomerMemory, question: string): string {
  return `(${memory.facts.length} fact(s) known) you asked: ${question}`;
}

const dir = mkdtempSync(join(tmpdir(), 'polestar-durable-example-'));
const path = join(dir, 'sessions.db');
try {
  // ---- first process: create the session, two turns, shut down
  {
    const store = new SqliteSessionStore({ path });
    const server = await startServer(store);
    const app = server.createContext();
    app.get(Events).on('session/turn-committed', (e: { sessionId: string; turn: number }) => log(`committed ${e.sessionId} turn ${e.turn}`));
    const durable = await app.get(Sessions).create({ agentId: 'support:42', sessionId: 'ticket-42', meta: { customer: 42 } });
    for (const question of ['my order is late', 'it is order #1234']) {
      await durable.turn((turnCtx, session) => {
        const memory = turnCtx.get(CustomerMemory);
        session.history.append({ role: 'user', content: question });
        memory.facts.push(question);
        session.history.append({ role: 'assistant', content: reply(memory, question) });
        turnCtx.get(TurnLog).record('usage', { inputTokens: question.length });
      });
    }
    assert.equal(durable.committedTurn, 2);
    await server.dispose(); // closes the session and releases its lease
    await store.close();
  }

  // ---- second process: resume where the first one stopped
  const store = new SqliteSessionStore({ path });
  const server = await startServer(store);
  const app = server.createContext();
  const durable = await app.get(Sessions).resume({ agentId: 'support:42', sessionId: 'ticket-42' });
  log(`resumed at turn ${durable.committedTurn} with ${durable.session.history.length} messages`);
  assert.equal(durable.committedTurn, 2);
  assert.equal(durable.session.history.length, 4);
  assert.deepEqual(durable.agent.ctx.get(CustomerMemory).facts, ['my order is late', 'it is order #1234']);
  assert.deepEqual(durable.meta, { customer: 42 });

  const pinned = await durable.checkpoint('before-refund');
  assert.equal(pinned, 2);

  // A failing turn: nothing is committed, memory goes back to turn 2.
  await assert.rejects(
    durable.turn((turnCtx, session) => {
      session.history.append({ role: 'user', content: 'refund me' });
      turnCtx.get(CustomerMemory).facts.push('wants a refund');
      throw new Error('the payment service is down');
    }),
    /payment service is down/,
  );
  assert.equal(durable.session.history.length, 4);
  assert.equal(durable.agent.ctx.get(CustomerMemory).facts.length, 2);

  await durable.turn((turnCtx, session) => {
    session.history.append({ role: 'user', content: 'never mind, cancel it' });
    turnCtx.get(CustomerMemory).facts.push('cancelled');
  });
  assert.equal(durable.committedTurn, 3);

  await durable.rollback(pinned);
  assert.equal(durable.committedTurn, 2);
  assert.equal(durable.session.history.length, 4);
  assert.equal(durable.agent.ctx.get(CustomerMemory).facts.length, 2);

  const statuses: string[] = [];
  for await (const e of app.get(Sessions).events('ticket-42')) statuses.push(`${e.turn}:${e.kind}:${e.status}`);
  log(statuses.join('\n'));
  assert.ok(statuses.includes('3:history/append:superseded'));

  await server.dispose();
  await store.close();
  if (selfTest) console.log('self-test ok: created, resumed in a new server, checkpointed, failed a turn, rolled back');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
