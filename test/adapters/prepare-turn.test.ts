/**
 * prepareTurn (SPEC §11.5): the system prompt and the tools of one turn, assembled and
 * rendered through the calling context.
 */
import {
  Agents,
  AgentsPlugin,
  Events,
  Prompts,
  PromptsPlugin,
  Server,
  Tools,
  ToolsPlugin,
  type AgentHandle,
  type SystemContext,
} from '../../src/index.js';
import { executeToolCall, prepareTurn, type PreparedTurn } from '../../src/adapters/index.js';

let server: Server;
let app: SystemContext;
let researcher: AgentHandle;

beforeEach(async () => {
  server = new Server();
  server.addPlugins(new ToolsPlugin(), new PromptsPlugin(), new AgentsPlugin());
  await server.finish();
  app = server.createContext();
  app.get(Prompts).section({ name: 'persona', order: 0, text: 'You help.' });
  app.get(Prompts).section({ name: 'who', order: 10, text: 'Agent {{agent_id}}.' });
  app.get(Tools).register({ name: 'shell', description: 'Runs a command', parameters: { type: 'object' }, execute: () => 'ran' });
  researcher = await app.get(Agents).create({
    id: 'researcher',
    setup: (ctx) => {
      ctx.get(Prompts).variable('agent_id', 'researcher');
      ctx.get(Tools).restrict({ deny: ['shell'] });
      ctx.get(Tools).register({ name: 'search', description: 'Searches', parameters: { type: 'object' }, execute: () => 'found' });
    },
  });
});

afterEach(async () => {
  await server.dispose();
});

test("the agent's rendered system prompt and exactly the tools its assembly shows", async () => {
  const turn = await prepareTurn(researcher.agent.ctx.child());
  expect(turn.system).toBe('You help.\n\nAgent researcher.');
  expect(turn.tools.map((t) => t.name)).toEqual(['search']);
  expect(turn.tools).toBe(turn.assembly.tools);
  expect(turn.assembly.sections.map((s) => s.name)).toEqual(['persona', 'who']);
});

test('a prompt/assemble listener that hides a tool hides it from the turn', async () => {
  app.get(Tools).register({ name: 'calc', description: 'Adds', parameters: { type: 'object' }, execute: () => 2 });
  app.get(Events).on('prompt/assemble', (a) => ({ ...a, tools: a.tools.filter((t: { name: string }) => t.name !== 'calc') }));
  const turn = await prepareTurn(researcher.agent.ctx);
  expect(turn.tools.map((t) => t.name)).toEqual(['search']);
});

test('rejects (never throws) without Prompts, for a non-context, and for an unknown variable', async () => {
  const bare = new Server();
  bare.addPlugins(new ToolsPlugin());
  await bare.finish();
  const p = prepareTurn(bare.createContext());
  expect(p).toBeInstanceOf(Promise);
  await expect(p).rejects.toThrow(/PromptsPlugin/);
  await bare.dispose();
  await expect(prepareTurn({} as SystemContext)).rejects.toThrow(/ctx must be a SystemContext/);
  await expect(prepareTurn(app)).rejects.toThrow(/unknown prompt variable "agent_id"/);
});

describe('executeToolCall', () => {
  test('runs a shown tool through the calling context: the body, guards and observers see it', async () => {
    const seen: unknown[] = [];
    app.get(Tools).register({
      name: 'whoami',
      description: 'Says which context called',
      parameters: { type: 'object' },
      execute: (_args, _execution, ctx) => {
        seen.push(ctx);
        return 'me';
      },
    });
    researcher.agent.ctx.get(Tools).restrict({ allow: ['whoami'] });
    const turnCtx = researcher.agent.ctx.child();
    const turn = await prepareTurn(turnCtx);
    const r = await executeToolCall(turnCtx, turn, { callId: 'c1', name: 'whoami', arguments: {} });
    expect(r).toMatchObject({ callId: 'c1', content: 'me', isError: false });
    expect(seen).toEqual([turnCtx]);
  });

  test('refuses a tool the turn did not show (hidden by a prompt/assemble listener) with UNKNOWN_TOOL, observed like any call', async () => {
    const results: string[] = [];
    app.get(Events).on('tools/result', (e: { name: string }, r: { error?: { code: string } }) => void results.push(`${e.name}:${r.error?.code ?? 'ok'}`));
    const off = app.get(Events).on('prompt/assemble', (a) => ({ ...a, tools: a.tools.filter((t: { name: string }) => t.name !== 'search') }));
    const turn = await prepareTurn(researcher.agent.ctx);
    off();
    expect(turn.tools).toEqual([]);
    const r = await executeToolCall(researcher.agent.ctx, turn, { callId: 'c2', name: 'search', arguments: {} });
    expect(r).toMatchObject({ callId: 'c2', isError: true, error: { code: 'UNKNOWN_TOOL' } });
    // the same call without the turn's manifest runs: the tool exists, it was only not shown
    expect((await researcher.agent.ctx.get(Tools).execute({ callId: 'c3', name: 'search', arguments: {} })).isError).toBe(false);
    expect(results).toEqual(['search:UNKNOWN_TOOL', 'search:ok']);
  });

  test('a turn prepared for one agent shows nothing another agent can run through it', async () => {
    const turn = await prepareTurn(researcher.agent.ctx);
    const other = await app.get(Agents).create({ id: 'other' });
    const r = await executeToolCall(other.agent.ctx, turn, { callId: 'c4', name: 'search', arguments: {} });
    expect(r.error?.code).toBe('UNKNOWN_TOOL');
  });

  test('rejects (never throws) for a programming error; a bad call resolves to an error result', async () => {
    const turn = await prepareTurn(researcher.agent.ctx);
    const p = executeToolCall(researcher.agent.ctx, {} as PreparedTurn, { callId: 'c', name: 'search', arguments: {} });
    expect(p).toBeInstanceOf(Promise);
    await expect(p).rejects.toThrow(/turn must be what prepareTurn\(ctx\) resolved to/);
    await expect(executeToolCall({} as SystemContext, turn, { callId: 'c', name: 'search', arguments: {} })).rejects.toThrow(/ctx must be a SystemContext/);
    const bad = await executeToolCall(researcher.agent.ctx, turn, { callId: 'c5', name: 'search', arguments: 'not json' });
    expect(bad.error?.code).toBe('INVALID_ARGS');
  });
});
