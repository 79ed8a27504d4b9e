/**
 * Scoped tools and prompts: two agents and a subagent-like child scope share one
 * deployment, each with its own tools, persona, restriction and guard.
 *
 * Run: `npx tsc -p tsconfig.run.json && node .build/examples/scoped-tools.js [--self-test]`
 */
import {
  Events,
  Prompts,
  PromptsPlugin,
  Server,
  Tools,
  ToolsPlugin,
  createScope,
  type ToolExecution,
  type ToolResult,
} from 'polestar-di';
import { LeakError, assertNoLeaks } from 'polestar-di/testing';

const selfTest = process.argv.includes('--self-test');
const failures: string[] = [];
function expectEqual(what: string, actual: unknown, expected: unknown): void {
  const ok = JSON.stringify(actual) === JSON.stringify(expected);
  if (!ok) failures.push(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

/** What assertNoLeaks reports besides the contexts themselves: the live scoped registrations. */
function liveRegistrations(): readonly string[] {
  try {
    assertNoLeaks(server);
    return [];
  } catch (err) {
    if (!(err instanceof LeakError)) throw err;
    return err.leaks.filter((l) => !/^(root context|context|scope) #/.test(l));
  }
}

const server = new Server();
server.addPlugins(new ToolsPlugin(), new PromptsPlugin());
await server.finish();
const app = server.createContext();

// ---- deployment-wide (global) registrations
const tools = app.get(Tools);
tools.register({
  name: 'read_file',
  description: 'Read a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  execute: ({ path }: { path: string }) => `contents of ${path}`,
});
tools.register({
  name: 'shell',
  description: 'Run a shell command',
  parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
  execute: ({ cmd }: { cmd: string }) => `ran ${cmd}`,
});
app.get(Prompts).section({ name: 'deployment:persona', order: 0, text: 'You are a helpful assistant.' });
app.get(Prompts).section({ name: 'deployment:rules', order: 10, text: 'Today is {{today}}.' });
app.get(Prompts).variable('today', () => '2026-11-30');
app.get(Events).on('tools/result', (e: ToolExecution, r: ToolResult) => {
  console.log(`  [tools/result] ${e.name} -> ${r.isError ? r.error?.code : 'ok'}: ${r.content}`);
});

// ---- two agents: plain key objects (the Agents API makes these for you)
const researcher = createScope(app, { id: 'researcher' });
const coder = createScope(app, { id: 'coder' });

researcher.ctx.get(Tools).register({
  name: 'web_search',
  description: 'Search the web',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  execute: ({ q }: { q: string }) => ({ hits: [`result for ${q}`] }),
});
researcher.ctx.get(Tools).restrict({ deny: ['shell'] });
researcher.ctx.get(Prompts).section({ name: 'deployment:persona', order: 0, text: 'You research things carefully.' });

coder.ctx.get(Tools).guard((e) => (e.name === 'shell' && String((e.arguments as { cmd?: string }).cmd).includes('rm ') ? 'destructive commands are not allowed' : undefined));

// ---- a subagent-like child scope under the researcher: flat, nothing inherited
const summarizer = createScope(researcher.ctx, { id: 'summarizer' });
summarizer.ctx.get(Tools).restrict({ allow: [] });
summarizer.ctx.get(Tools).register({
  name: 'summarize',
  description: 'Summarize text',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: ({ text }: { text: string }) => text.slice(0, 20) + '…',
});
summarizer.ctx.get(Prompts).section({ name: 'deployment:persona', order: 0, text: 'You summarize in one line.' });

for (const [label, scope] of [['researcher', researcher], ['coder', coder], ['summarizer', summarizer]] as const) {
  const names = scope.ctx.get(Tools).visible().map((t) => t.name);
  const prompts = scope.ctx.get(Prompts);
  const text = prompts.render(await prompts.assemble());
  console.log(`\n${label}: tools = ${names.join(', ')}`);
  console.log(`${label}: prompt = ${JSON.stringify(text)}`);
}
expectEqual('researcher tools', researcher.ctx.get(Tools).visible().map((t) => t.name), ['read_file', 'web_search']);
expectEqual('coder tools', coder.ctx.get(Tools).visible().map((t) => t.name), ['read_file', 'shell']);
expectEqual('summarizer tools', summarizer.ctx.get(Tools).visible().map((t) => t.name), ['summarize']);

console.log('\ncalls:');
const call = async (label: string, scope: { ctx: typeof app }, name: string, args: unknown): Promise<ToolResult> => {
  console.log(`${label} calls ${name}(${JSON.stringify(args)})`);
  return scope.ctx.get(Tools).execute({ callId: `${label}-${name}`, name, arguments: args });
};
const r1 = await call('researcher', researcher, 'web_search', { q: 'tides' });
const r2 = await call('researcher', researcher, 'shell', { cmd: 'ls' });
const r3 = await call('coder', coder, 'shell', { cmd: 'rm -rf /' });
const r4 = await call('coder', coder, 'shell', { cmd: 'ls' });
const r5 = await call('summarizer', summarizer, 'web_search', { q: 'parent tool?' });
const r6 = await call('summarizer', summarizer, 'summarize', { text: 'A very long text about tides and moons.' });
const r7 = await call('coder', coder, 'read_file', { path: 42 });
expectEqual('web_search', r1.content, '{"hits":["result for tides"]}');
expectEqual('restricted shell', r2.error?.code, 'UNKNOWN_TOOL');
expectEqual('guarded rm', r3.content, 'Error: destructive commands are not allowed');
expectEqual('coder ls', r4.content, 'ran ls');
expectEqual('no inheritance', r5.content, 'Error: unknown tool "web_search"');
expectEqual('summarize', r6.isError, false);
expectEqual('schema check', r7.error?.code, 'INVALID_ARGS');

// ---- disposing the researcher disposes its child scope and every registration
await researcher.dispose();
console.log(`\nafter disposing the researcher (and so its summarizer), live scoped registrations: ${JSON.stringify(liveRegistrations())}`);
expectEqual('summarizer gone', summarizer.ctx.isDisposed, true);
expectEqual('left', liveRegistrations(), ['tool guard of scope coder']);
await server.dispose();

if (failures.length > 0) {
  console.error(`\nself-test FAILED:\n${failures.join('\n')}`);
  process.exit(1);
}
if (selfTest) console.log('\nself-test passed');
