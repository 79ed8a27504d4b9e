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
import { prepareTurn } from '../../src/adapters/index.js';

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
