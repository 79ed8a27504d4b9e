// The "Testing systems" example the README carried before issue 13 (the testing kit is now
// taught by docs/testing.md, whose blocks test/testing/doc-examples.test.ts runs), kept as
// a test of the kit: runSystem's `{ output, ctx }` with a fake model client and a seeded
// local, one local per root context on a createTestServer, and assertNoLeaks failing while
// a root context is still alive.
import { Res, ResMut, system, token } from '../../src/index.js';
import { assertNoLeaks, createTestServer, runSystem } from '../../src/testing/index.js';

// --- the code under test -------------------------------------------------------
interface ModelClient {
  complete(prompt: string): Promise<string>;
}
const ModelClient = token<ModelClient>('ModelClient');

class AgentMemory {
  constructor(readonly facts: string[] = []) {}
}

class Reply {
  constructor(readonly text: string) {}
}

const answer = system(
  [Res(ModelClient), ResMut(AgentMemory)],
  async (model, memory) => {
    const text = await model.complete(`Known facts: ${memory.facts.join('; ')}`);
    memory.facts.push(`answered: ${text}`);
    return new Reply(text);
  },
  { name: 'answer' },
);

// --- the fakes -----------------------------------------------------------------
class FakeModelClient implements ModelClient {
  readonly prompts: string[] = [];
  constructor(private readonly replies: string[]) {}
  async complete(prompt: string): Promise<string> {
    this.prompts.push(prompt);
    return this.replies.shift() ?? 'no more replies';
  }
}

// --- the tests -----------------------------------------------------------------
test('answer asks the model with what the agent remembers', async () => {
  const model = new FakeModelClient(['Paris']);
  const { output, ctx } = await runSystem(answer, {
    globals: [[ModelClient, model]], // a fake model client as a global
    locals: [[AgentMemory, () => new AgentMemory(['user lives in France'])]], // a fake memory as a local
  });

  expect(output).toBeInstanceOf(Reply);
  expect(output.text).toBe('Paris');
  expect(model.prompts).toEqual(['Known facts: user lives in France']);
  expect(ctx.get(AgentMemory).facts).toEqual(['user lives in France', 'answered: Paris']);

  await ctx.dispose();
  assertNoLeaks(ctx.server); // every context made through the server is gone
  await ctx.server.dispose();
});

test('each turn context gets its own memory; nothing leaks', async () => {
  const server = await createTestServer({
    globals: [[ModelClient, new FakeModelClient(['one', 'two'])]],
    locals: [AgentMemory],
  });
  const first = server.createContext();
  const second = server.createContext();
  await first.run(answer);
  await second.run(answer);
  expect(first.get(AgentMemory).facts).toEqual(['answered: one']);
  expect(second.get(AgentMemory).facts).toEqual(['answered: two']);

  await first.dispose();
  expect(() => assertNoLeaks(server)).toThrow(/root context/); // `second` is still alive
  await second.dispose();
  assertNoLeaks(server);
  await server.dispose();
});
