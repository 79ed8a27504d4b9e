/**
 * mountMcpTools (SPEC §11.5) against an in-memory structural source: registration into
 * the mounting context's scope, results, ownership of the source (closed exactly once on
 * every path), rollback, pagination, list_changed and refresh.
 */
import {
  Agents,
  AgentsPlugin,
  ContextDisposedError,
  Events,
  Server,
  Tools,
  ToolsPlugin,
  type AgentHandle,
  type SystemContext,
} from '../../src/index.js';
import { MCP_DEFAULT_SCHEMA_DIALECT, McpMountError, mountMcpTools, type McpToolSource } from '../../src/adapters/index.js';
import { FakeMcpSource, hanging, tool } from './fake-mcp-source.js';

let server: Server;
let app: SystemContext;
let a: AgentHandle;
let b: AgentHandle;

beforeEach(async () => {
  server = new Server();
  server.addPlugins(new ToolsPlugin(), new AgentsPlugin());
  await server.finish();
  app = server.createContext();
  a = await app.get(Agents).create({ id: 'a' });
  b = await app.get(Agents).create({ id: 'b' });
});

afterEach(async () => {
  await server.dispose();
});

function call(ctx: SystemContext, name: string, args: unknown = {}, signal?: AbortSignal) {
  return ctx.get(Tools).execute({ callId: 'c1', name, arguments: args, ...(signal === undefined ? {} : { signal }) });
}

describe('registration', () => {
  test('every listed tool, across pages, is registered through ctx: the mounting agent sees it, another agent does not', async () => {
    const source = new FakeMcpSource([tool('echo'), tool('add'), tool('sum'), tool('ping'), tool('pong')], 2);
    const mount = await mountMcpTools(a.agent.ctx, source, { prefix: 'ev_' });
    expect(mount.names).toEqual(['ev_echo', 'ev_add', 'ev_sum', 'ev_ping', 'ev_pong']);
    expect(source.lists).toBe(3);
    expect(a.agent.ctx.get(Tools).visible().map((t) => t.name)).toEqual(['ev_echo', 'ev_add', 'ev_sum', 'ev_ping', 'ev_pong']);
    expect(b.agent.ctx.get(Tools).visible()).toEqual([]);
    expect(app.get(Tools).visible()).toEqual([]);
    expect((await call(b.agent.ctx, 'ev_echo')).error?.code).toBe('UNKNOWN_TOOL');
    expect(a.agent.ctx.get(Tools).get('ev_echo')?.description).toBe('the echo tool');
  });

  test('a mount through an unscoped context registers global tools', async () => {
    const source = new FakeMcpSource([tool('echo')]);
    await mountMcpTools(app, source);
    expect(app.get(Tools).get('echo')).toBeDefined();
    expect((await call(b.agent.ctx, 'echo', { q: 'x' })).content).toBe('echo ran with {"q":"x"}');
  });

  test('a missing description is registered as an empty one; filter skips tools', async () => {
    const source = new FakeMcpSource([tool('keep', { description: undefined }), tool('skip')]);
    const seen: string[] = [];
    const mount = await mountMcpTools(a.agent.ctx, source, { filter: (t) => (seen.push(t.name), t.name !== 'skip') });
    expect(mount.names).toEqual(['keep']);
    expect(seen).toEqual(['keep', 'skip']);
    expect(a.agent.ctx.get(Tools).get('keep')?.description).toBe('');
  });

  test('an inputSchema without $schema is registered as 2020-12 (MCP default): its 2020-12 keywords are enforced', async () => {
    const source = new FakeMcpSource([
      tool('pair', { inputSchema: { type: 'object', properties: { p: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] } }, dependentRequired: { p: ['why'] } } }),
    ]);
    await mountMcpTools(a.agent.ctx, source);
    const stored = a.agent.ctx.get(Tools).get('pair');
    expect(stored?.parameters.$schema).toBe(MCP_DEFAULT_SCHEMA_DIALECT);
    expect((await call(a.agent.ctx, 'pair', { p: ['x', 'y'], why: 'w' })).error?.code).toBe('INVALID_ARGS');
    expect((await call(a.agent.ctx, 'pair', { p: ['x', 1] })).error?.code).toBe('INVALID_ARGS');
    expect((await call(a.agent.ctx, 'pair', { p: ['x', 1], why: 'w' })).isError).toBe(false);
    // a stamped schema is registered as listed
    expect(a.agent.ctx.get(Tools).schemas().length).toBe(1);
    const s2 = new FakeMcpSource([tool('seven')]);
    await mountMcpTools(b.agent.ctx, s2);
    expect(b.agent.ctx.get(Tools).get('seven')?.parameters.$schema).toBe('http://json-schema.org/draft-07/schema#');
  });

  test('the schema is enforced before the server is called', async () => {
    const source = new FakeMcpSource([tool('echo')]);
    await mountMcpTools(a.agent.ctx, source);
    const r = await call(a.agent.ctx, 'echo', { q: 42 });
    expect(r.error?.code).toBe('INVALID_ARGS');
    expect(source.calls).toEqual([]);
  });
});

describe('results', () => {
  test('the text parts joined with a newline are the content', async () => {
    const source = new FakeMcpSource([tool('multi')]);
    source.handlers.set('multi', () => ({
      content: [
        { type: 'text', text: 'line 1' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'text', text: 'line 2' },
      ],
    }));
    await mountMcpTools(a.agent.ctx, source);
    const r = await call(a.agent.ctx, 'multi');
    expect(r).toMatchObject({ callId: 'c1', content: 'line 1\nline 2', isError: false });
  });

  test('the whole MCP result (content, structuredContent) is the output; annotations are kept where guards see them', async () => {
    const annotations = { readOnlyHint: true, destructiveHint: false, title: 'Weather' };
    const source = new FakeMcpSource([tool('weather', { annotations })]);
    const mcpResult = {
      content: [{ type: 'text', text: '{"temp":21}' }, { type: 'resource_link', uri: 'file:///w.json', name: 'w' }],
      structuredContent: { temp: 21 },
    };
    source.handlers.set('weather', () => ({ ...mcpResult, isError: false }));
    await mountMcpTools(a.agent.ctx, source, { prefix: 'w_' });
    const tools = a.agent.ctx.get(Tools);
    expect(tools.get('w_weather')?.annotations).toEqual(annotations);
    expect(tools.schemas()[0].annotations).toEqual(annotations);
    const r = await call(a.agent.ctx, 'w_weather');
    expect(r.content).toBe('{"temp":21}');
    expect(r.output).toEqual(mcpResult);
    // a guard acting on MCP's hints
    tools.guard((execution) => (execution.annotations?.readOnlyHint === true ? 'read-only tools are paused' : undefined));
    expect(await call(a.agent.ctx, 'w_weather')).toMatchObject({ isError: true, error: { code: 'DENIED' } });
    expect(source.calls.length).toBe(1);
  });

  test('a result without structuredContent has { content } as its output; an error has none', async () => {
    const source = new FakeMcpSource([tool('plain'), tool('fail')]);
    source.handlers.set('fail', () => ({ isError: true, content: [{ type: 'text', text: 'nope' }] }));
    await mountMcpTools(a.agent.ctx, source);
    const r = await call(a.agent.ctx, 'plain', { q: 'x' });
    expect(r.output).toEqual({ content: [{ type: 'text', text: 'plain ran with {"q":"x"}' }] });
    expect('output' in (await call(a.agent.ctx, 'fail'))).toBe(false);
  });

  test('a tools/post-execute listener that replaces the content still wins; one that blocks removes the output', async () => {
    const source = new FakeMcpSource([tool('echo')]);
    await mountMcpTools(a.agent.ctx, source);
    const events = a.agent.ctx.get(Events);
    const off = events.on('tools/post-execute', () => ({ kind: 'accept', content: 'redacted' }));
    const r = await call(a.agent.ctx, 'echo', { q: 'secret' });
    expect(r.content).toBe('redacted');
    expect(r.output).toBeUndefined();
    off();
    events.on('tools/post-execute', () => ({ kind: 'block', reason: 'no' }));
    expect(await call(a.agent.ctx, 'echo', { q: 'secret' })).toMatchObject({ content: 'Error: no', error: { code: 'DENIED' } });
  });

  test('isError: true is EXECUTION_ERROR with the server text', async () => {
    const source = new FakeMcpSource([tool('fail')]);
    source.handlers.set('fail', () => ({ isError: true, content: [{ type: 'text', text: 'Access denied' }, { type: 'text', text: 'outside the root' }] }));
    await mountMcpTools(a.agent.ctx, source);
    const r = await call(a.agent.ctx, 'fail');
    expect(r.isError).toBe(true);
    expect(r.error?.code).toBe('EXECUTION_ERROR');
    expect(r.content).toBe('Error: Access denied\noutside the root');
  });

  test('a server failure (a rejected callTool) is EXECUTION_ERROR', async () => {
    const source = new FakeMcpSource([tool('boom')]);
    source.handlers.set('boom', () => Promise.reject(new Error('MCP error -32603: internal')));
    await mountMcpTools(a.agent.ctx, source);
    expect(await call(a.agent.ctx, 'boom')).toMatchObject({ isError: true, content: 'Error: MCP error -32603: internal', error: { code: 'EXECUTION_ERROR' } });
  });

  test("the caller's abort reaches the server's signal", async () => {
    const source = new FakeMcpSource([tool('slow')]);
    source.handlers.set('slow', hanging());
    await mountMcpTools(a.agent.ctx, source);
    const ac = new AbortController();
    const p = call(a.agent.ctx, 'slow', {}, ac.signal);
    await new Promise((r) => setTimeout(r, 5));
    ac.abort(new Error('user pressed stop'));
    const r = await p;
    expect(r.error?.code).toBe('EXECUTION_ERROR');
    expect(source.calls[0].signal.aborted).toBe(true);
  });
});

test("disposing the calling turn aborts the server's signal of its call; the mount and its tools stay", async () => {
  const source = new FakeMcpSource([tool('slow')]);
  source.handlers.set('slow', hanging());
  const mount = await mountMcpTools(a.agent.ctx, source);
  const turn = a.agent.ctx.child();
  const pending = call(turn, 'slow');
  await new Promise((r) => setTimeout(r, 5));
  await turn.dispose();
  expect((await pending).error?.code).toBe('EXECUTION_ERROR');
  expect(source.calls[0].signal.aborted).toBe(true);
  expect(mount.names).toEqual(['slow']);
  expect(source.closes).toBe(0);
});

describe('ownership: the source is closed exactly once', () => {
  test('disposing the context unregisters, aborts in-flight calls and closes the source before dispose() resolves', async () => {
    const source = new FakeMcpSource([tool('slow'), tool('echo')]);
    source.handlers.set('slow', hanging());
    await mountMcpTools(a.agent.ctx, source);
    const tools = app.get(Tools);
    const pending = call(a.agent.ctx, 'slow');
    await new Promise((r) => setTimeout(r, 5));
    await a.dispose();
    expect(source.closes).toBe(1);
    expect(source.calls[0].signal.aborted).toBe(true);
    const r = await pending;
    expect(r.error?.code).toBe('EXECUTION_ERROR');
    expect(tools.knownNames()).toEqual([]);
    await server.dispose();
    expect(source.closes).toBe(1);
  });

  test('handle.dispose() does the same, once, however often it is called; the context then closes nothing', async () => {
    const source = new FakeMcpSource([tool('slow'), tool('echo')]);
    source.handlers.set('slow', hanging());
    const mount = await mountMcpTools(a.agent.ctx, source);
    const pending = call(a.agent.ctx, 'slow');
    await new Promise((r) => setTimeout(r, 5));
    const d1 = mount.dispose();
    const d2 = mount.dispose();
    await Promise.all([d1, d2]);
    expect(source.closes).toBe(1);
    expect((await pending).error?.code).toBe('EXECUTION_ERROR');
    expect(mount.names).toEqual([]);
    expect(a.agent.ctx.get(Tools).knownNames()).toEqual([]);
    await expect(mount.refresh()).rejects.toThrow(McpMountError);
    await a.dispose();
    expect(source.closes).toBe(1);
  });

  test('a failing close rejects the handle dispose and the context disposal', async () => {
    const s1 = new FakeMcpSource([tool('x')]);
    s1.closeError = new Error('EPIPE');
    const m1 = await mountMcpTools(a.agent.ctx, s1);
    await expect(m1.dispose()).rejects.toThrow(/closing the MCP source failed: EPIPE/);
    const s2 = new FakeMcpSource([tool('y')]);
    s2.closeError = new Error('EPIPE');
    await mountMcpTools(b.agent.ctx, s2);
    await expect(b.dispose()).rejects.toThrow(/EPIPE/);
    expect(s2.closes).toBe(1);
  });

  test('two mounts close together (concurrent cleanups), not one after the other', async () => {
    const order: string[] = [];
    const slowClose = (name: string, s: FakeMcpSource): void => {
      s.close = async () => {
        s.closes++;
        order.push(`start ${name}`);
        await new Promise((r) => setTimeout(r, 30));
        order.push(`end ${name}`);
      };
    };
    const s1 = new FakeMcpSource([tool('one')]);
    const s2 = new FakeMcpSource([tool('two')]);
    slowClose('1', s1);
    slowClose('2', s2);
    await mountMcpTools(a.agent.ctx, s1);
    await mountMcpTools(a.agent.ctx, s2);
    await a.dispose();
    expect(order.slice(0, 2).sort()).toEqual(['start 1', 'start 2']);
    expect(s1.closes + s2.closes).toBe(2);
  });
});

describe('failure rolls back: every registration undone, the source closed once, a rejection naming the tool', () => {
  test('a registration that fails (a name already taken in the layer)', async () => {
    a.agent.ctx.get(Tools).register({ name: 'ev_sum', description: 'mine', parameters: { type: 'object' }, execute: () => 'mine' });
    const source = new FakeMcpSource([tool('echo'), tool('sum'), tool('ping')]);
    const err = await mountMcpTools(a.agent.ctx, source, { prefix: 'ev_' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(McpMountError);
    expect((err as McpMountError).toolName).toBe('sum');
    expect((err as Error).message).toMatch(/could not register MCP tool "sum" as "ev_sum": .*already registered.*options\.filter/);
    expect(a.agent.ctx.get(Tools).knownNames()).toEqual(['ev_sum']);
    expect(source.closes).toBe(1);
    await a.dispose();
    expect(source.closes).toBe(1);
  });

  test('a schema the registry refuses names the tool', async () => {
    const source = new FakeMcpSource([tool('ok'), tool('bad', { inputSchema: { type: 'strnig' } })]);
    await expect(mountMcpTools(a.agent.ctx, source)).rejects.toThrow(/MCP tool "bad"/);
    expect(a.agent.ctx.get(Tools).knownNames()).toEqual([]);
    expect(source.closes).toBe(1);
  });

  test('listing fails (on a later page)', async () => {
    const source = new FakeMcpSource([tool('a1'), tool('a2'), tool('a3')], 1);
    const list = source.listTools.bind(source);
    source.listTools = async (cursor) => {
      if (cursor === '2') throw new Error('MCP error -32000: Connection closed');
      return list(cursor);
    };
    await expect(mountMcpTools(a.agent.ctx, source)).rejects.toThrow(/listing the MCP server's tools failed \(page at cursor "2"\): MCP error -32000/);
    expect(source.closes).toBe(1);
    expect(a.agent.ctx.get(Tools).knownNames()).toEqual([]);
  });

  test('a pagination loop is refused', async () => {
    const source = new FakeMcpSource([tool('a1')]);
    source.listTools = async () => ({ tools: [], nextCursor: 'again' });
    await expect(mountMcpTools(a.agent.ctx, source)).rejects.toThrow(/nextCursor "again" twice/);
    expect(source.closes).toBe(1);
  });

  test('the context is already disposed', async () => {
    const ctx = a.agent.ctx;
    await a.dispose();
    const source = new FakeMcpSource([tool('echo')]);
    await expect(mountMcpTools(ctx, source)).rejects.toThrow(ContextDisposedError);
    expect(source.closes).toBe(1);
    expect(source.lists).toBe(0);
  });

  test('the context is disposed while the tools are listed', async () => {
    const source = new FakeMcpSource([tool('echo')]);
    let open!: () => void;
    source.listGate = new Promise((r) => (open = r));
    const p = mountMcpTools(a.agent.ctx, source);
    const settled = p.then(
      () => 'resolved',
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 5));
    await a.dispose();
    expect(source.closes).toBe(1);
    const err = await settled;
    expect(err).toBeInstanceOf(McpMountError);
    expect((err as Error).message).toMatch(/context was disposed while the MCP tools were being mounted/);
    open();
    expect(source.closes).toBe(1);
  });

  test('bad arguments reject (never throw) and still close the source', async () => {
    const source = new FakeMcpSource([tool('echo')]);
    const p = mountMcpTools(a.agent.ctx, source, { prefix: 7 as unknown as string });
    expect(p).toBeInstanceOf(Promise);
    await expect(p).rejects.toThrow(/options\.prefix must be a string/);
    expect(source.closes).toBe(1);
    await expect(mountMcpTools(a.agent.ctx, { listTools: 1 } as unknown as McpToolSource)).rejects.toThrow(/source\.listTools must be a function/);
    await expect(mountMcpTools({} as SystemContext, new FakeMcpSource([]))).rejects.toThrow(/ctx must be a SystemContext/);
    const s2 = new FakeMcpSource([tool('echo')]);
    await expect(mountMcpTools(a.agent.ctx, s2, { filter: () => 'yes' as unknown as boolean })).rejects.toThrow(/options\.filter returned the string "yes" for MCP tool "echo"/);
    expect(s2.closes).toBe(1);
  });

  test('a server listing one name twice', async () => {
    const source = new FakeMcpSource([tool('echo'), tool('echo')]);
    await expect(mountMcpTools(a.agent.ctx, source)).rejects.toThrow(/listed tool "echo" twice/);
    expect(source.closes).toBe(1);
  });
});

describe('list_changed and refresh', () => {
  test('list_changed re-lists and re-syncs: new tools added, gone ones removed (their calls aborted), changed ones re-registered', async () => {
    const source = new FakeMcpSource([tool('keep'), tool('gone'), tool('change')]);
    source.handlers.set('gone', hanging());
    const mount = await mountMcpTools(a.agent.ctx, source);
    const pending = call(a.agent.ctx, 'gone');
    await new Promise((r) => setTimeout(r, 5));
    source.tools = [tool('keep'), tool('change', { description: 'changed' }), tool('new')];
    source.changed();
    await mount.refresh(); // queued after the sync list_changed started
    expect(mount.names).toEqual(['keep', 'change', 'new']);
    expect(a.agent.ctx.get(Tools).get('change')?.description).toBe('changed');
    expect((await pending).error?.code).toBe('EXECUTION_ERROR');
    expect(source.calls[0].signal.aborted).toBe(true);
    expect(source.closes).toBe(0);
  });

  test('a failed automatic re-sync goes to onRefreshError; the mount stays', async () => {
    const source = new FakeMcpSource([tool('keep')]);
    const errors: McpMountError[] = [];
    const mount = await mountMcpTools(a.agent.ctx, source, { onRefreshError: (e) => errors.push(e) });
    source.failNextList = new Error('timeout');
    source.changed();
    await new Promise((r) => setTimeout(r, 10));
    expect(errors.map((e) => e.message)).toEqual(["listing the MCP server's tools failed: timeout"]);
    expect(mount.names).toEqual(['keep']);
    source.tools = [tool('keep'), tool('more')];
    await mount.refresh();
    expect(mount.names).toEqual(['keep', 'more']);
  });

  test('refresh() rejects naming the tool that failed; list_changed after dispose does nothing', async () => {
    a.agent.ctx.get(Tools).register({ name: 'taken', description: '', parameters: { type: 'object' }, execute: () => '' });
    const source = new FakeMcpSource([tool('keep')]);
    const mount = await mountMcpTools(a.agent.ctx, source);
    source.tools = [tool('keep'), tool('taken')];
    await expect(mount.refresh()).rejects.toMatchObject({ toolName: 'taken' });
    expect(mount.names).toEqual(['keep']);
    await mount.dispose();
    const lists = source.lists;
    source.changed();
    await new Promise((r) => setTimeout(r, 5));
    expect(source.lists).toBe(lists);
  });
});
