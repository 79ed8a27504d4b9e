/**
 * Regression: a per-agent local captured in `setup` (`const notes = agentCtx.getMut(Notes)`)
 * and used by a tool silently stopped being persisted after a resume: `setup` ran before the
 * persisted locals were restored, so it captured the per-agent instance that the restore
 * then replaced; the tool kept writing to it, reported wrong counts, and its writes were
 * never committed. The persisted locals are now restored before `setup` runs on resume.
 */
import { AgentsPlugin, MemorySessionStore, Server, Sessions, SessionsPlugin, Tools, ToolsPlugin, type AgentSetup, type LocalSerializer } from '../../src/index.js';

class Notes {
  items: string[] = [];
}

const notesSerializer: LocalSerializer<Notes> = {
  key: 'app.notes',
  version: 1,
  scope: 'agent',
  serialize: (n) => n.items,
  deserialize: (data) => Object.assign(new Notes(), { items: [...(data as string[])] }),
};

// The most natural code: capture the local once in setup, use it from a tool.
const setup: AgentSetup = (agentCtx) => {
  const notes = agentCtx.getMut(Notes);
  agentCtx.get(Tools).register({
    name: 'take_note',
    description: 'Remember a note',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    execute: ({ text }: { text: string }) => {
      notes.items.push(text);
      return `${notes.items.length} notes`;
    },
  });
};

test('a local captured in setup and written by a tool is the persisted one after a resume', async () => {
  const store = new MemorySessionStore();
  const server = new Server();
  server.registerLocal(Notes, { per: 'agent' });
  server.addPlugins(new ToolsPlugin(), new AgentsPlugin(), new SessionsPlugin({ store, serializers: [[Notes, notesSerializer]] }));
  await server.finish();
  const sessions = server.createContext().get(Sessions);
  const note = (text: string) => (turnCtx: import('../../src/index.js').SystemContext) => turnCtx.get(Tools).execute({ callId: text, name: 'take_note', arguments: { text } });

  const created = await sessions.create({ agentId: 'a', sessionId: 's', setup });
  expect((await created.turn(note('first'))).content).toBe('1 notes');
  await created.close();

  const resumed = await sessions.resume({ agentId: 'a', sessionId: 's', setup });
  expect((await resumed.turn(note('second'))).content).toBe('2 notes');
  expect(resumed.agent.ctx.get(Notes).items).toEqual(['first', 'second']);
  await resumed.close();

  expect((await store.load('s')).checkpoint.locals).toEqual([{ key: 'app.notes', scope: 'agent', version: 1, data: ['first', 'second'] }]);
  await server.dispose();
});
