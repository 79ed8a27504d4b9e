/**
 * mountMcpTools against real MCP servers from npm (`@modelcontextprotocol/server-memory` and
 * `-filesystem`), each a child process over stdio through the MCP SDK 1.x client and the
 * shipped `fromMcpSdkClient` bridge: both
 * mounted into one agent under prefixes, called as that agent, refused to another, and
 * their processes gone once the agent is disposed.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agents, AgentsPlugin, Server, Tools, ToolsPlugin, type AgentHandle } from '../../src/index.js';
import { fromMcpSdkClient, mountMcpTools, type McpMount } from '../../src/adapters/index.js';
import { isAlive, startServer } from './mcp-sdk-bridge.js';

let dir: string;
let server: Server;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'polestar-mcp-'));
});

afterAll(async () => {
  await server?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

test('memory and filesystem servers mounted into one agent: calls, errors, isolation, and the children exit with the agent', async () => {
  server = new Server();
  server.addPlugins(new ToolsPlugin(), new AgentsPlugin());
  await server.finish();
  const app = server.createContext();
  const [memory, fs] = await Promise.all([
    startServer('server-memory', [], { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') }),
    startServer('server-filesystem', [dir]),
  ]);
  let mem: McpMount | undefined;
  let files: McpMount | undefined;
  const agent: AgentHandle = await app.get(Agents).create({
    id: 'librarian',
    setup: async (ctx) => {
      [mem, files] = await Promise.all([
        mountMcpTools(ctx, fromMcpSdkClient(memory.client), { prefix: 'mem_' }),
        mountMcpTools(ctx, fromMcpSdkClient(fs.client), { prefix: 'fs_' }),
      ]);
    },
  });
  const other = await app.get(Agents).create({ id: 'other' });
  expect(mem?.names).toEqual(expect.arrayContaining(['mem_create_entities', 'mem_search_nodes', 'mem_read_graph']));
  expect(files?.names).toEqual(expect.arrayContaining(['fs_read_text_file', 'fs_write_file', 'fs_list_directory']));
  const tools = agent.agent.ctx.get(Tools);
  expect(tools.visible().length).toBe((mem?.names.length ?? 0) + (files?.names.length ?? 0));

  const created = await tools.execute({
    callId: 'm1',
    name: 'mem_create_entities',
    arguments: { entities: [{ name: 'polestar', entityType: 'library', observations: ['mounts MCP tools'] }] },
  });
  expect(created.isError).toBe(false);
  const found = await tools.execute({ callId: 'm2', name: 'mem_search_nodes', arguments: { query: 'polestar' } });
  expect(found.content).toContain('mounts MCP tools');

  const file = join(dir, 'note.txt');
  const written = await tools.execute({ callId: 'f1', name: 'fs_write_file', arguments: { path: file, content: 'hello' } });
  expect(written.isError).toBe(false);
  expect(readFileSync(file, 'utf8')).toBe('hello');
  const read = await tools.execute({ callId: 'f2', name: 'fs_read_text_file', arguments: { path: file } });
  expect(read).toMatchObject({ callId: 'f2', content: 'hello', isError: false });
  // the server answers isError: true for a path outside its roots
  const denied = await tools.execute({ callId: 'f3', name: 'fs_read_text_file', arguments: { path: '/etc/hostname' } });
  expect(denied.error?.code).toBe('EXECUTION_ERROR');
  expect(denied.content).toMatch(/^Error: .*[Aa]ccess denied/);

  expect((await other.agent.ctx.get(Tools).execute({ callId: 'o1', name: 'fs_read_text_file', arguments: { path: file } })).error?.code).toBe('UNKNOWN_TOOL');

  expect(isAlive(memory.pid) && isAlive(fs.pid)).toBe(true);
  await agent.dispose();
  expect(isAlive(memory.pid)).toBe(false);
  expect(isAlive(fs.pid)).toBe(false);
  expect(app.get(Tools).knownNames()).toEqual([]);
});
