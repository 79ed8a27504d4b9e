/**
 * End to end: the agent service example, two instances started in-process on one store (two
 * "processes" behind a load balancer with no sticky routing), driven over HTTP with fetch.
 * The two-process self-test over real child processes is agent-service.process.test.ts.
 */
import { MemorySessionStore } from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';
import { startService, type RunningService } from '../../examples/agent-service.js';
import { ModelClient, type ScriptedModel } from '../../examples/support/agent-service-agent.js';

let store: MemorySessionStore;
let a: RunningService;
let b: RunningService;

beforeEach(async () => {
  store = new MemorySessionStore();
  a = await startService({ store, owner: 'a', waitMs: 5_000 });
  b = await startService({ store, owner: 'b', waitMs: 5_000 });
});

afterEach(async () => {
  await a.close();
  await b.close();
  assertNoLeaks(a.server);
  assertNoLeaks(b.server);
});

async function call(s: RunningService, method: string, path: string, body?: unknown, raw?: string): Promise<{ status: number; json: any; allow: string | null }> {
  const res = await fetch(s.url + path, { method, headers: { 'content-type': 'application/json' }, body: raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
  return { status: res.status, json: await res.json(), allow: res.headers.get('allow') };
}
const say = (s: RunningService, conv: string, text: string, messageId?: string) => call(s, 'POST', `/conversations/${conv}/messages`, { text, messageId });
const users = async (conv: string): Promise<string[]> =>
  ((await call(a, 'GET', `/conversations/${conv}`)).json.messages as { role: string; content: string }[]).filter((m) => m.role === 'user').map((m) => m.content);

test('binds to 127.0.0.1 on a free port', () => {
  expect(a.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(a.url).not.toBe(b.url);
});

test('a conversation created on one process, served live there, handed over to the other, with its tools and notes', async () => {
  let r = await say(a, 'c', 'What is the weather in Oslo and calculate 6*7?');
  expect(r.status).toBe(200);
  expect(r.json).toMatchObject({ served: 'created', owner: 'a', turn: 1 });
  expect(r.json.toolCalls.map((t: any) => t.content)).toEqual(['Oslo: 16°C, light wind', '42']);
  r = await say(a, 'c', 'remember "aisle seat"');
  expect(r.json).toMatchObject({ served: 'live', turn: 2 });
  r = await say(b, 'c', 'remember "no onions"');
  expect(r.json).toMatchObject({ served: 'resumed', owner: 'b', turn: 3 });
  expect(r.json.toolCalls[0].content).toBe('noted (2 note(s): aisle seat; no onions)'); // the persisted local moved
  r = await say(a, 'c', 'hello');
  expect(r.json).toMatchObject({ served: 'resumed', owner: 'a', turn: 4 });
  expect(await users('c')).toEqual(['What is the weather in Oslo and calculate 6*7?', 'remember "aisle seat"', 'remember "no onions"', 'hello']);
});

test('a retried message (same messageId) on the other process is a duplicate, stored once', async () => {
  expect((await say(a, 'c', 'hi', 'm-1')).status).toBe(200);
  const again = await say(b, 'c', 'hi', 'm-1');
  expect(again.json).toMatchObject({ duplicate: true, turn: 1 });
  expect(await users('c')).toEqual(['hi']);
});

test('messages of one conversation at the same moment on both processes: both answered, each stored once', async () => {
  const [x, y] = await Promise.all([say(a, 'c', 'one'), say(b, 'c', 'two')]);
  expect([x.status, y.status]).toEqual([200, 200]);
  expect((await users('c')).sort()).toEqual(['one', 'two']);
});

test('a cancel through the other process ends the turn in flight with 409 TURN_CANCELLED', async () => {
  expect((await call(b, 'POST', '/conversations/c/cancel', {})).json).toEqual({ conversation: 'c', cancelled: false });
  expect((await say(a, 'c', 'first')).status).toBe(200);
  const slow = say(a, 'c', 'be slow');
  let cancelled = false;
  for (let i = 0; i < 100 && !cancelled; i++) {
    await new Promise((r) => setTimeout(r, 20));
    cancelled = (await call(b, 'POST', '/conversations/c/cancel', { reason: 'stop' })).json.cancelled;
  }
  expect(cancelled).toBe(true);
  const r = await slow;
  expect(r.status).toBe(409);
  expect(r.json.error).toMatchObject({ code: 'TURN_CANCELLED', reason: 'stop' });
  expect(await users('c')).toEqual(['first']);
  expect((await say(a, 'c', 'after')).json.turn).toBe(2);
});

test('list, read and delete conversations', async () => {
  await say(a, 'one', 'hi');
  await say(b, 'two', 'hi');
  expect((await call(a, 'GET', '/conversations')).json.conversations.map((c: any) => c.id).sort()).toEqual(['one', 'two']);
  expect((await call(a, 'DELETE', '/conversations/one')).json).toEqual({ conversation: 'one', deleted: true });
  expect((await call(a, 'GET', '/conversations/one')).status).toBe(404);
  expect((await call(b, 'DELETE', '/conversations/one')).status).toBe(404);
});

test.each([
  ['malformed JSON', 'POST', '/conversations/c/messages', undefined, '{"text": "hi"', 400, 'BAD_JSON'],
  ['a body that is not an object', 'POST', '/conversations/c/messages', [1], undefined, 400, 'BAD_REQUEST'],
  ['an empty message', 'POST', '/conversations/c/messages', { text: '' }, undefined, 400, 'BAD_REQUEST'],
  ['a bad conversation id', 'POST', '/conversations/a%20b/messages', { text: 'hi' }, undefined, 400, 'BAD_REQUEST'],
  ['a malformed percent-encoding', 'GET', '/conversations/%E0%A4%A', undefined, undefined, 400, 'BAD_REQUEST'],
  ['an unknown conversation', 'GET', '/conversations/ghost', undefined, undefined, 404, 'NOT_FOUND'],
  ['an unknown route', 'GET', '/agents', undefined, undefined, 404, 'NOT_FOUND'],
  ['a wrong method', 'PUT', '/conversations', undefined, undefined, 405, 'METHOD_NOT_ALLOWED'],
])('%s: a clear 4xx JSON error, nothing stored', async (_label, method, path, body, raw, status, code) => {
  const r = await call(a, method as string, path as string, body, raw as string | undefined);
  expect([r.status, r.json.error.code]).toEqual([status, code]);
  expect((await call(a, 'GET', '/conversations')).json.conversations).toEqual([]);
});

test('405 answers carry the Allow header; a body over 64 KiB is a 413', async () => {
  expect(await call(a, 'PATCH', '/conversations/c')).toMatchObject({ status: 405, allow: 'GET, DELETE' });
  expect(await call(a, 'GET', '/conversations/c/messages')).toMatchObject({ status: 405, allow: 'POST' });
  const big = await call(a, 'POST', '/conversations/c/messages', { text: 'x'.repeat(70_000) });
  expect([big.status, big.json.error.code]).toEqual([413, 'TOO_LARGE']);
});

test('the scripted model is a global of each process', async () => {
  await say(a, 'c', 'hi');
  expect((a.server.getGlobal(ModelClient) as ScriptedModel).calls).toBe(1);
  expect((b.server.getGlobal(ModelClient) as ScriptedModel).calls).toBe(0);
});
