/**
 * MCP tools owned by one agent: `@modelcontextprotocol/server-everything` (a real MCP
 * server, started as a child process over stdio with the MCP SDK 1.x client) is mounted
 * into the `researcher` agent with `mountMcpTools`. The researcher calls its tools; the
 * `coder` agent can not see them; disposing the researcher closes the client, and the
 * example checks that the server's child process has exited.
 *
 * Run: `npm run build:run && node .build/examples/mcp.js [--self-test]`
 */
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Agents, AgentsPlugin, Events, Server, Tools, ToolsPlugin, type ToolExecution, type ToolResult } from '../src/index.js';
import { mountMcpTools, type McpCallToolResult, type McpMount, type McpToolSource } from '../src/adapters/index.js';

const failures: string[] = [];
function check(what: string, ok: boolean, detail: unknown = ''): void {
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}${ok ? '' : ` (${JSON.stringify(detail)})`}`);
  if (!ok) failures.push(what);
}

/** The bridge from the MCP SDK 1.x client to polestar's structural source: these few lines are all the glue. */
function fromMcpSdkClient(client: Client): McpToolSource {
  return {
    listTools: (cursor) => client.listTools(cursor === undefined ? undefined : { cursor }),
    // 1.x: callTool(params, resultSchema?, options?); the signal sends notifications/cancelled on abort
    callTool: (name, args, signal) => client.callTool({ name, arguments: { ...args } }, undefined, { signal }) as Promise<McpCallToolResult>,
    close: () => client.close(),
    onToolsChanged: (listener) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => listener()),
  };
}

// ---- the deployment
const server = new Server();
server.addPlugins(new ToolsPlugin(), new AgentsPlugin());
await server.finish();
const app = server.createContext();
app.get(Events).on('tools/result', (e: ToolExecution, r: ToolResult) => {
  console.log(`  [tools/result] ${e.name} -> ${r.isError ? r.error?.code : 'ok'}: ${r.content.slice(0, 80)}`);
});

// ---- the MCP server: a child process over stdio (no network)
const serverScript = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
const transport = new StdioClientTransport({ command: process.execPath, args: [serverScript, 'stdio'], stderr: 'ignore' });
const client = new Client({ name: 'polestar-example', version: '1.0.0' });
let t0 = performance.now();
await client.connect(transport);
const pid = transport.pid;
console.log(`server-everything started (pid ${pid}) in ${Math.round(performance.now() - t0)} ms`);

// ---- the researcher owns the mount: its tools live in its scope, its disposal closes the client
let mount: McpMount | undefined;
t0 = performance.now();
const researcher = await app.get(Agents).create({
  id: 'researcher',
  setup: async (ctx) => {
    mount = await mountMcpTools(ctx, fromMcpSdkClient(client), { prefix: 'ev_' });
  },
});
const coder = await app.get(Agents).create({ id: 'coder' });
const names = mount?.names ?? [];
console.log(`mounted ${names.length} tools in ${Math.round(performance.now() - t0)} ms: ${names.join(', ')}`);
check('every tool of server-everything is mounted under the prefix', names.length >= 10 && names.includes('ev_echo') && names.includes('ev_get-sum'), names);

// ---- calls as the researcher
const tools = researcher.agent.ctx.get(Tools);
const echo = await tools.execute({ callId: 'c1', name: 'ev_echo', arguments: { message: 'hello from polestar' } });
check('echo answers with the server text as content', echo.content === 'Echo: hello from polestar', echo);
const sum = await tools.execute({ callId: 'c2', name: 'ev_get-sum', arguments: { a: 2, b: 40 } });
check('get-sum answers', !sum.isError && sum.content.includes('42'), sum);
const bad = await tools.execute({ callId: 'c3', name: 'ev_get-sum', arguments: { a: 'two', b: 40 } });
check('bad arguments are INVALID_ARGS, checked by polestar before the server is called', bad.error?.code === 'INVALID_ARGS', bad);
const weather = await tools.execute({ callId: 'c4', name: 'ev_get-structured-content', arguments: { location: 'Chicago' } });
check('structured content: the text part is the content', !weather.isError && JSON.parse(weather.content).conditions !== undefined, weather);
const structured = (weather.output as { structuredContent?: { conditions?: unknown } } | undefined)?.structuredContent;
check("structured content: the whole MCP result is the output", typeof structured?.conditions === 'string', weather.output);
check("the server's annotations are on the tool", tools.get('ev_echo')?.annotations?.readOnlyHint === true, tools.get('ev_echo')?.annotations);

// a guard acting on MCP's hints: this agent may not reach the outside world
researcher.agent.ctx.get(Tools).guard((execution) => (execution.annotations?.openWorldHint === true ? 'open-world tools are off for this agent' : undefined));
const gz = await tools.execute({ callId: 'c6', name: 'ev_gzip-file-as-resource', arguments: {} });
check('a guard denies an openWorldHint tool before the server is called', gz.error?.code === 'DENIED', gz);

// the caller gives up: the signal reaches the server as notifications/cancelled
t0 = performance.now();
const slow = await tools.execute({ callId: 'c7', name: 'ev_trigger-long-running-operation', arguments: { duration: 30, steps: 3 }, signal: AbortSignal.timeout(300) });
check('an aborted call settles at once as EXECUTION_ERROR', slow.error?.code === 'EXECUTION_ERROR' && performance.now() - t0 < 5_000, slow);

// ---- the coder can not see or call them
const coderTools = coder.agent.ctx.get(Tools);
check('another agent does not see the mounted tools', coderTools.visible().every((t) => !t.name.startsWith('ev_')), coderTools.knownNames());
const foreign = await coderTools.execute({ callId: 'c5', name: 'ev_echo', arguments: { message: 'x' } });
check('another agent calling one gets UNKNOWN_TOOL', foreign.error?.code === 'UNKNOWN_TOOL', foreign);

// ---- disposing the researcher aborts its in-flight call and closes the client: the child process is gone
const inFlight = tools.execute({ callId: 'c8', name: 'ev_trigger-long-running-operation', arguments: { duration: 30, steps: 3 } });
await new Promise((resolve) => setTimeout(resolve, 100));
t0 = performance.now();
await researcher.dispose();
console.log(`researcher disposed in ${Math.round(performance.now() - t0)} ms`);
const aborted = await inFlight;
check('the call in flight was aborted by the disposal', aborted.error?.code === 'EXECUTION_ERROR' && /aborted/.test(aborted.content), aborted);
check('the tools are gone with their agent', app.get(Tools).knownNames().every((n) => !n.startsWith('ev_')));
check('the server child process has exited', pid !== null && !isAlive(pid), pid);

await server.dispose();

function isAlive(p: number): boolean {
  try {
    process.kill(p, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

if (failures.length > 0) {
  console.error(`examples/mcp.ts: ${failures.length} check(s) failed: ${failures.join('; ')}`);
  process.exit(1);
}
console.log('examples/mcp.ts: all checks passed');
