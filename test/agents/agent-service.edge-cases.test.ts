/**
 * The agent service under request edge cases: malformed paths, methods not allowed,
 * bodies over the limit, user text that is not a valid prompt template, and requests
 * racing a deletion. Each gets a 4xx answer and leaves the agent table consistent with
 * the registry (no agent the HTTP API can not reach, no 500 for a client's race).
 */
import { Agents, Events } from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';
import { ModelClient, startService, type RunningService } from '../../examples/agent-service.js';

let service: RunningService;

beforeEach(async () => {
  service = await startService();
});

afterEach(async () => {
  await service.close();
  assertNoLeaks(service.server);
});

async function call(method: string, path: string, body?: unknown, raw?: string): Promise<{ status: number; json: any; allow: string | null }> {
  const res = await fetch(service.url + path, {
    method,
    headers: { 'content-type': 'application/json' },
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  return { status: res.status, json: await res.json(), allow: res.headers.get('allow') };
}

const ids = (): string[] => service.app.get(Agents).list().map((a) => a.id);
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 20));

test('a malformed percent-encoding in the path is a 400, not a 500', async () => {
  const r = await call('GET', '/agents/%E0%A4%A');
  expect(r.status).toBe(400);
  expect(r.json.error.code).toBe('BAD_REQUEST');
});

test('405 answers carry the Allow header', async () => {
  expect(await call('PUT', '/agents')).toMatchObject({ status: 405, allow: 'GET, POST' });
  await call('POST', '/agents', { id: 'a' });
  expect(await call('PATCH', '/agents/a')).toMatchObject({ status: 405, allow: 'GET, DELETE' });
  expect(await call('GET', '/agents/a/messages')).toMatchObject({ status: 405, allow: 'POST' });
});

test('a body over the limit gets its 413 (declared or streamed), not a reset connection', async () => {
  const big = JSON.stringify({ id: 'big', persona: 'x'.repeat(300_000) });
  const declared = await call('POST', '/agents', undefined, big);
  expect(declared.status).toBe(413);
  expect(declared.json.error.code).toBe('TOO_LARGE');
  const bytes = new TextEncoder().encode(big);
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < bytes.length; i += 16_384) c.enqueue(bytes.slice(i, i + 16_384));
      c.close();
    },
  });
  const res = await fetch(service.url + '/agents', { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
  expect(res.status).toBe(413);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('TOO_LARGE');
  expect(ids()).toEqual([]);
});

test('a persona with a {{placeholder}} no variable fills is refused at create (400, id free), not a live agent that 500s', async () => {
  const r = await call('POST', '/agents', { id: 'p', persona: 'Answer like {{"a": 1}} or {{mood}}.' });
  expect(r.status).toBe(400);
  expect(r.json.error.message).toMatch(/unknown prompt variable/);
  expect(ids()).toEqual([]);
  const ok = await call('POST', '/agents', { id: 'p', persona: 'I am {{agent_id}}.' });
  expect(ok.status).toBe(201);
  expect(ok.json.systemPrompt).toBe('I am p.\n\nYou are agent p.');
});

test('an id re-created while the old agent\'s agent/disposed listeners still run: 409 until its stored conversation is deleted, then 201 and reachable', async () => {
  await call('POST', '/agents', { id: 'a' });
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  // a slow listener before the service's own: the agent id is free, the old agent not yet announced to the service
  service.app.get(Events).on('agent/disposed', () => gate, { prepend: true });
  const deleting = call('DELETE', '/agents/a');
  await tick();
  // the conversation is durable: its rows are deleted once the old agent is disposed, not before
  const early = await call('POST', '/agents', { id: 'a' });
  expect([early.status, early.json.error.code]).toEqual([409, 'CONFLICT']);
  open();
  expect((await deleting).status).toBe(200);
  expect((await call('POST', '/agents', { id: 'a' })).status).toBe(201);
  expect(ids()).toEqual(['a']);
  const r = await call('GET', '/agents/a');
  expect(r.status).toBe(200);
  expect((await call('DELETE', '/agents/a')).status).toBe(200);
});

test('deleting a parent while a message to its subagent awaits the model: 409 for the message, nothing left', async () => {
  await call('POST', '/agents', { id: 'parent' });
  await call('POST', '/agents/parent/subagents', { id: 'sub' });
  const model = service.server.getGlobal(ModelClient);
  const complete = model.complete.bind(model);
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  model.complete = async (request) => {
    await gate;
    return complete(request);
  };
  const message = call('POST', '/agents/sub/messages', { text: 'calculate 1+1' });
  await tick();
  expect((await call('DELETE', '/agents/parent')).json).toEqual({ deleted: ['parent', 'sub'] });
  open();
  const r = await message;
  expect(r.status).toBe(409);
  expect(r.json.error).toEqual({ code: 'CONFLICT', message: 'agent "sub" was deleted while this request was in flight' });
  expect((await call('GET', '/agents/sub')).status).toBe(404);
  expect(ids()).toEqual([]);
});
