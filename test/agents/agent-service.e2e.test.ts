/**
 * End to end: the agent service example, started in-process on port 0 and driven over
 * HTTP with fetch. Every bad request gets a clear 4xx JSON error and changes nothing.
 */
import { Agents, Tools, inspect } from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';
import { scopedLive } from './helpers.js';
import { FakeModelClient, ModelClient, selfTest, startService, type RunningService } from '../../examples/agent-service.js';

let service: RunningService;

beforeEach(async () => {
  service = await startService();
});

afterEach(async () => {
  await service.close();
});

async function call(method: string, path: string, body?: unknown, raw?: string): Promise<{ status: number; json: any; type: string | null }> {
  const res = await fetch(service.url + path, {
    method,
    headers: { 'content-type': 'application/json' },
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  return { status: res.status, json: await res.json(), type: res.headers.get('content-type') };
}

/** Everything a bad request must leave unchanged. */
async function snapshot(): Promise<unknown> {
  const list = (await call('GET', '/agents')).json;
  const details = [];
  for (const a of list.agents) details.push((await call('GET', `/agents/${a.id}`)).json);
  return { list, details, contexts: inspect(service.app).children.length };
}

test('binds to 127.0.0.1 on a free port', () => {
  expect(service.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(service.url.endsWith(':0')).toBe(false);
});

test('create, message with tool calls, subagent, delete: the agent world is real', async () => {
  let r = await call('POST', '/agents', { id: 'lead', persona: 'You lead.', tools: ['calculator', 'web_search'] });
  expect(r.status).toBe(201);
  expect(r.type).toMatch(/application\/json/);
  expect(r.json).toEqual({
    id: 'lead',
    parent: null,
    tools: ['calculator', 'web_search', 'note'],
    systemPrompt: 'You lead.\n\nYou are agent lead.',
    historyLength: 0,
  });
  const lead = service.app.get(Agents).get('lead');
  expect(lead).toBeDefined();

  r = await call('POST', '/agents/lead/messages', { text: 'calculate 2+3*4 and search for "polestar" and remember "x"' });
  expect(r.status).toBe(200);
  expect(r.json.toolCalls.map((c: any) => [c.name, c.isError, c.content])).toEqual([
    ['calculator', false, '14'],
    ['web_search', false, JSON.stringify({ hits: ['polestar - Wikipedia', 'polestar explained'] })],
    ['note', false, 'noted (1 note(s): x)'],
  ]);
  expect(r.json.scratchpad).toEqual(['calculator: ok', 'web_search: ok', 'note: ok']);
  expect(r.json.historyLength).toBe(5);
  expect((service.server.getGlobal(ModelClient) as FakeModelClient).calls).toBe(1);

  r = await call('POST', '/agents/lead/subagents', { id: 'helper', persona: 'You help.' });
  expect(r.status).toBe(201);
  expect(r.json.parent).toBe('lead');
  // flat: global tools plus its own note tool, nothing of the parent's restriction
  expect(r.json.tools).toEqual(['get_weather', 'calculator', 'web_search', 'shell', 'note']);
  const helper = service.app.get(Agents).get('helper');
  expect(helper?.ctx.parent).toBe(lead?.ctx);
  expect(scopedLive(service.server, 'lead')).toContain('tool "note" of scope lead');
  expect(scopedLive(service.server, 'helper')).toContain('tool "note" of scope helper');

  r = await call('DELETE', '/agents/lead');
  expect(r.json).toEqual({ deleted: ['lead', 'helper'] });
  expect(helper?.isDisposed).toBe(true);
  expect((await call('GET', '/agents/helper')).status).toBe(404);
  expect((await call('GET', '/agents')).json).toEqual({ agents: [] });
  // every scoped registration of both agents is undone; their keys are no longer live (SPEC 10.7)
  expect(scopedLive(service.server, 'lead')).toEqual([]);
  expect(scopedLive(service.server, 'helper')).toEqual([]);
  expect(() => service.app.get(Tools).knownNames(lead)).toThrow(TypeError);
  expect(service.app.get(Tools).knownNames()).toEqual(['get_weather', 'calculator', 'web_search', 'shell']);
  expect(inspect(service.app).children.length).toBe(0);
});

describe('bad input: a clear 4xx JSON error that changes nothing', () => {
  beforeEach(async () => {
    expect((await call('POST', '/agents', { id: 'a', tools: ['calculator'] })).status).toBe(201);
    expect((await call('POST', '/agents/a/messages', { text: 'calculate 1+1' })).status).toBe(200);
  });

  test.each([
    ['unknown agent (message)', 'POST', '/agents/ghost/messages', { text: 'hi' }, undefined, 404, 'NOT_FOUND', /no agent "ghost"/],
    ['unknown agent (delete)', 'DELETE', '/agents/ghost', undefined, undefined, 404, 'NOT_FOUND', /no agent "ghost"/],
    ['unknown agent (subagent parent)', 'POST', '/agents/ghost/subagents', { id: 'kid' }, undefined, 404, 'NOT_FOUND', /no agent "ghost"/],
    ['malformed JSON', 'POST', '/agents', undefined, '{"id": "b",', 400, 'BAD_JSON', /not valid JSON/],
    ['malformed JSON (message)', 'POST', '/agents/a/messages', undefined, 'text=hi', 400, 'BAD_JSON', /not valid JSON/],
    ['a body that is not an object', 'POST', '/agents', [1, 2], undefined, 400, 'BAD_REQUEST', /JSON object/],
    ['a missing id', 'POST', '/agents', { persona: 'x' }, undefined, 400, 'BAD_REQUEST', /"id" must be/],
    ['tools that are not names', 'POST', '/agents', { id: 'b', tools: 'calculator' }, undefined, 400, 'BAD_REQUEST', /"tools" must be an array/],
    ['duplicate id', 'POST', '/agents', { id: 'a' }, undefined, 409, 'CONFLICT', /agent "a" is already registered/],
    ['duplicate id as a subagent', 'POST', '/agents/a/subagents', { id: 'a' }, undefined, 409, 'CONFLICT', /already registered/],
    ['an allow list naming an unknown tool', 'POST', '/agents', { id: 'b', tools: ['calculator', 'nope'] }, undefined, 400, 'BAD_REQUEST', /unknown tool "nope"/],
    ['a tool the agent can not see', 'POST', '/agents/a/tool-calls', { name: 'shell', arguments: { cmd: 'ls' } }, undefined, 404, 'UNKNOWN_TOOL', /unknown tool "shell"/],
    ['a tool that does not exist', 'POST', '/agents/a/tool-calls', { name: 'teleport', arguments: {} }, undefined, 404, 'UNKNOWN_TOOL', /unknown tool "teleport"/],
    ['arguments that break the schema', 'POST', '/agents/a/tool-calls', { name: 'calculator', arguments: { expression: 7 } }, undefined, 400, 'INVALID_ARGS', /expression/],
    ['an empty message', 'POST', '/agents/a/messages', { text: '' }, undefined, 400, 'BAD_REQUEST', /"text"/],
    ['an unknown route', 'GET', '/models', undefined, undefined, 404, 'NOT_FOUND', /no route/],
    ['a wrong method', 'PUT', '/agents', { id: 'x' }, undefined, 405, 'METHOD_NOT_ALLOWED', /PUT/],
  ])('%s', async (_label, method, path, body, raw, status, code, message) => {
    const before = await snapshot();
    const r = await call(method as string, path as string, body, raw as string | undefined);
    expect(r.status).toBe(status);
    expect(r.type).toMatch(/application\/json/);
    expect(r.json.error.code).toBe(code);
    expect(r.json.error.message).toMatch(message as RegExp);
    expect(await snapshot()).toEqual(before);
  });

  test('a failed create frees the id: the corrected request succeeds', async () => {
    expect((await call('POST', '/agents', { id: 'b', tools: ['nope'] })).status).toBe(400);
    expect((await call('POST', '/agents', { id: 'b', tools: ['calculator'] })).status).toBe(201);
  });

  test('the guard denies a destructive command for an agent that sees the shell tool', async () => {
    expect((await call('POST', '/agents', { id: 'ops' })).status).toBe(201);
    const before = await snapshot();
    const r = await call('POST', '/agents/ops/tool-calls', { name: 'shell', arguments: { cmd: 'rm -rf /' } });
    expect(r.status).toBe(403);
    expect(r.json.error).toEqual({ code: 'DENIED', message: 'destructive shell commands are not allowed' });
    expect(await snapshot()).toEqual(before);
    expect((await call('POST', '/agents/ops/tool-calls', { name: 'shell', arguments: { cmd: 'ls' } })).json).toEqual({ name: 'shell', content: '$ ls\nok' });
  });

  test('concurrent creates of one id: one 201, one 409', async () => {
    const [x, y] = await Promise.all([call('POST', '/agents', { id: 'twin' }), call('POST', '/agents', { id: 'twin' })]);
    expect([x.status, y.status].sort()).toEqual([201, 409]);
  });
});

test('the scripted self-test passes against the service', async () => {
  const lines: string[] = [];
  expect(await selfTest(service.url, (l) => lines.push(l))).toEqual([]);
  expect(lines.length).toBeGreaterThan(10);
});

test('closing disposes every agent and leaves nothing behind', async () => {
  await call('POST', '/agents', { id: 'p' });
  await call('POST', '/agents/p/subagents', { id: 'c' });
  const agents = service.app.get(Agents).list();
  await service.close();
  for (const a of agents) expect(a.isDisposed).toBe(true);
  assertNoLeaks(service.server);
});
