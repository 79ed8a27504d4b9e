/**
 * MCP tools owned by one agent, driven by a model loop: `@modelcontextprotocol/server-everything`
 * (a real MCP server, started as a child process over stdio with the MCP SDK 1.x client) is
 * mounted into the `researcher` agent through the shipped bridge (`fromMcpSdkClient`). A
 * scripted model in the OpenAI Chat Completions shape asks for two tool calls, reads their
 * results and answers: a complete two-turn tool-calling loop, every call run by polestar
 * (schema check, guards, events) and answered by the MCP server. The `coder` agent can not
 * see the tools; disposing the researcher aborts its call in flight (the server gets
 * `notifications/cancelled`) and closes the client, and the server's child process exits.
 *
 * Run: `npm run build && npm run build:run && node .build/examples/mcp.js [--self-test]`
 */
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Agents, AgentsPlugin, Events, Prompts, PromptsPlugin, Server, Tools, ToolsPlugin, type SystemContext, type ToolExecution, type ToolResult } from 'polestar-di';
import {
  executeToolCall,
  fromMcpSdkClient,
  fromOpenAIChatToolCall,
  mountMcpTools,
  prepareTurn,
  toOpenAIChatToolMessage,
  toOpenAIChatTools,
  type McpMount,
  type OpenAIChatFunctionCall,
  type OpenAIChatTool,
  type OpenAIChatToolMessage,
} from 'polestar-di/adapters';

const failures: string[] = [];
function check(what: string, ok: boolean, detail: unknown = ''): void {
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}${ok ? '' : ` (${JSON.stringify(detail)})`}`);
  if (!ok) failures.push(what);
}

// ---- a scripted model in the Chat Completions shape (stands in for `openai.chat.completions.create`)
type Message =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: OpenAIChatFunctionCall[] }
  | OpenAIChatToolMessage;
const requests: { messages: Message[]; tools: OpenAIChatTool[] }[] = [];
function model(request: { messages: Message[]; tools: OpenAIChatTool[] }): Extract<Message, { role: 'assistant' }> {
  requests.push({ messages: [...request.messages], tools: request.tools });
  const results = request.messages.filter((m): m is OpenAIChatToolMessage => m.role === 'tool');
  if (results.length === 0) {
    // first turn: call two of the tools it was shown
    return {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'ev_get-sum', arguments: JSON.stringify({ a: 2, b: 40 }) } },
        { id: 'call_2', type: 'function', function: { name: 'ev_echo', arguments: JSON.stringify({ message: 'polestar' }) } },
      ],
    };
  }
  // second turn: answer from the tool results
  return { role: 'assistant', content: `The tools said: ${results.map((r) => r.content).join(' / ')}` };
}

/** One user message, run to the model's final answer: the glue between the model and polestar. */
async function ask(ctx: SystemContext, question: string): Promise<string> {
  const turn = await prepareTurn(ctx); // system prompt + the tools this agent may use
  const messages: Message[] = [{ role: 'system', content: turn.system }, { role: 'user', content: question }];
  for (;;) {
    const reply = model({ messages, tools: toOpenAIChatTools(turn.tools) });
    messages.push(reply);
    if (reply.tool_calls === undefined || reply.tool_calls.length === 0) return reply.content ?? '';
    for (const call of reply.tool_calls) {
      const result = await executeToolCall(ctx, turn, fromOpenAIChatToolCall(call, ctx.signal));
      messages.push(toOpenAIChatToolMessage(result));
    }
  }
}

// ---- the deployment
const server = new Server();
server.addPlugins(new ToolsPlugin(), new PromptsPlugin(), new AgentsPlugin());
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
    ctx.get(Prompts).section({ name: 'persona', order: 0, text: 'You research with the tools you are given.' });
    // from the mount on, the agent owns the client: its disposal closes it
    mount = await mountMcpTools(ctx, fromMcpSdkClient(client), { prefix: 'ev_' });
  },
});
const coder = await app.get(Agents).create({ id: 'coder' });
const names = mount?.names ?? [];
console.log(`mounted ${names.length} tools in ${Math.round(performance.now() - t0)} ms: ${names.join(', ')}`);
check('every tool of server-everything is mounted under the prefix', names.length >= 10 && names.includes('ev_echo') && names.includes('ev_get-sum'), names);

// ---- the model loop, in one turn of the researcher
const turnCtx = researcher.agent.ctx.child();
const answer = await ask(turnCtx, 'What is 2 + 40, and can you echo my name?');
console.log(`  model: ${answer}`);
check('the model was shown the mounted tools (in the Chat Completions shape)', requests[0]?.tools.some((t) => t.function.name === 'ev_get-sum') === true, requests[0]?.tools.length);
check('two model turns: tool calls, then an answer', requests.length === 2, requests.length);
check("the second turn carried the server's results back", requests[1]?.messages.filter((m) => m.role === 'tool').length === 2, requests[1]?.messages);
check('the answer is built from what the MCP server computed', answer.includes('42') && answer.includes('Echo: polestar'), answer);
await turnCtx.dispose();

// ---- direct calls as the researcher
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
