/**
 * Bug (issue 8 #7): a system that never settles kept its borrow on an ancestor's local
 * after its own context was disposed, which locked the agent's local forever (every
 * later ResMut of it, and every Res while it wrote, failed with BorrowConflict). Fixed
 * (SPEC 10.5): a system run is tracked on the context it runs on; that context's disposal
 * awaits it up to `disposeTimeoutMs`, then gives up on it and releases its borrows, even
 * though the body never settles. The same holds for withRes/withMut callbacks and tool
 * systems.
 */
import { Res, ResMut, Server, system, token, toolSystem, type ToolExecution } from '../../src/index.js';

class Memory {
  facts: string[] = [];
}
const never = () => new Promise<never>(() => undefined);
const tick = () => new Promise((r) => setImmediate(r));

async function setup() {
  const server = new Server({ disposeTimeoutMs: 20 });
  await server.finish();
  const agent = server.createContext();
  agent.insert(new Memory());
  return { server, agent };
}

describe("a never-settling holder's borrows are released when the context it runs on is disposed", () => {
  test('a system reading an ancestor local', async () => {
    const { server, agent } = await setup();
    const turn = agent.child().child();
    void turn.run(system([Res(Memory)], never, { name: 'stuck', output: token('stuck') }));
    await tick();
    expect(() => agent.getMut(Memory)).toThrow(/borrow conflict/);
    // the disposal waits for it, gives up at disposeTimeoutMs, and names it
    await expect(turn.dispose()).rejects.toThrow(/system "stuck" was still running/);
    expect(agent.getMut(Memory)).toBeInstanceOf(Memory);
    await expect(agent.run(system([ResMut(Memory)], (m) => m.facts.push('written'), { output: token('n') }))).resolves.toBe(1);
    await server.dispose();
  });

  test('a system writing its own local, seen from an ancestor reader', async () => {
    const { server, agent } = await setup();
    const session = agent.child();
    session.insert(new Memory());
    void session.run(system([ResMut(Memory)], never, { name: 'writer', output: token('w') }));
    await tick();
    await expect(session.dispose()).rejects.toThrow(/system "writer"/);
    // a sibling session is unaffected either way; the agent's own Memory is free
    expect(agent.getMut(Memory)).toBeInstanceOf(Memory);
    await server.dispose();
  });

  test('a withRes callback and a tool system', async () => {
    const { server, agent } = await setup();
    const turn = agent.child();
    void turn.withRes(Memory, never);
    const body = toolSystem([Res(Memory)], never);
    void body({}, Object.freeze({ name: 'recall', callId: 'c1' }) as unknown as ToolExecution, turn);
    await tick();
    expect(() => agent.getMut(Memory)).toThrow(/borrow conflict: Memory \(2 running/);
    await expect(turn.dispose()).rejects.toThrow(/withRes\(Memory\) callback/);
    expect(agent.getMut(Memory)).toBeInstanceOf(Memory);
    await server.dispose();
  });
});
