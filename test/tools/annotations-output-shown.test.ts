/**
 * SPEC 11.2 (annotations, output) and 11.3 (execute side: `shown`).
 */
import { jest } from '@jest/globals';
import { Events, Tools, type PostExecuteDecision, type PromptAssembly, type ToolExecution, type ToolResult } from '../../src/index.js';
import { tool, toolServer } from './helpers.js';

describe('annotations', () => {
  test('snapshotted and deep-frozen at register; on Tool, on the schemas (detached) and on the execution', async () => {
    const { server, app } = await toolServer();
    const t = app.get(Tools);
    const annotations = { readOnlyHint: true, tags: ['a'] };
    t.register({ ...tool('read'), annotations });
    t.register(tool('plain'));
    annotations.readOnlyHint = false;
    annotations.tags.push('b');
    const stored = t.get('read');
    expect(stored?.annotations).toEqual({ readOnlyHint: true, tags: ['a'] });
    expect(Object.isFrozen(stored?.annotations)).toBe(true);
    expect(Object.isFrozen(stored?.annotations?.tags)).toBe(true);
    expect(t.get('plain')).not.toHaveProperty('annotations');
    const schemas = t.schemas();
    const s = schemas.find((x) => x.name === 'read');
    expect(s?.annotations).toEqual({ readOnlyHint: true, tags: ['a'] });
    expect(Object.isFrozen(s?.annotations)).toBe(false);
    expect(schemas.find((x) => x.name === 'plain')).not.toHaveProperty('annotations');
    // guards and policies can act on it
    t.guard((e) => (e.annotations?.readOnlyHint === true ? undefined : 'only read-only tools'));
    expect((await t.execute({ callId: '1', name: 'read', arguments: {} })).isError).toBe(false);
    expect((await t.execute({ callId: '2', name: 'plain', arguments: {} })).error).toEqual({ code: 'DENIED', message: 'only read-only tools' });
    await server.dispose();
  });

  test('refused when not a lossless JSON object, naming the tool', async () => {
    const { server, app } = await toolServer();
    const t = app.get(Tools);
    expect(() => t.register({ ...tool('f'), annotations: { x: () => 1 } as never })).toThrow(/Tools\.register\(f\): tool annotations must be losslessly JSON-serializable: annotations\.x is a function/);
    expect(() => t.register({ ...tool('a'), annotations: [1] as never })).toThrow(/Tools\.register\(a\): annotations must be a JSON object/);
    expect(() => t.register({ ...tool('n'), annotations: null as never })).toThrow(TypeError);
    expect(t.visible()).toEqual([]);
    await server.dispose();
  });
});

describe('output', () => {
  test("the body's raw return value, lossless JSON and deep-frozen, next to content; absent for undefined", async () => {
    const { server, app } = await toolServer();
    const t = app.get(Tools);
    const value = { rows: [{ id: 1 }] };
    t.register(tool('obj', () => value));
    t.register(tool('str', () => 'text'));
    t.register(tool('none', () => undefined));
    const r = await t.execute({ callId: '1', name: 'obj', arguments: {} });
    expect(r).toEqual({ callId: '1', content: '{"rows":[{"id":1}]}', isError: false, output: { rows: [{ id: 1 }] } });
    expect(r.output).not.toBe(value);
    expect(Object.isFrozen((r.output as { rows: unknown[] }).rows)).toBe(true);
    expect((await t.execute({ callId: '2', name: 'str', arguments: {} })).output).toBe('text');
    expect(await t.execute({ callId: '3', name: 'none', arguments: {} })).not.toHaveProperty('output');
    await server.dispose();
  });

  test('refused, failed and timed-out calls have none', async () => {
    const { server, app } = await toolServer();
    const t = app.get(Tools);
    t.register(tool('boom', () => {
      throw new Error('boom');
    }));
    t.register(tool('slow', (_a) => new Promise((r) => setTimeout(() => r('late'), 200)), { timeoutMs: 5 }));
    t.register(tool('ok'));
    t.guard((e) => (e.name === 'ok' ? 'no' : undefined));
    for (const name of ['boom', 'slow', 'ok', 'missing']) {
      const r = await t.execute({ callId: name, name, arguments: {} });
      expect(r.isError).toBe(true);
      expect(r).not.toHaveProperty('output');
    }
    await new Promise((r) => setTimeout(r, 250));
    await server.dispose();
  });

  test('post-execute: block removes it; accept with content removes it unless it gives one; accept with output replaces it', async () => {
    const { server, app } = await toolServer();
    const t = app.get(Tools);
    t.register(tool('x', () => ({ secret: 1 })));
    let decide: (r: ToolResult) => PostExecuteDecision = () => ({ kind: 'accept' });
    app.get(Events).on('tools/post-execute', (_d, _e, r) => decide(r));
    const call = () => t.execute({ callId: '1', name: 'x', arguments: {} });
    expect((await call()).output).toEqual({ secret: 1 });
    decide = () => ({ kind: 'block', reason: 'withheld' });
    expect(await call()).not.toHaveProperty('output');
    decide = () => ({ kind: 'accept', content: 'redacted' });
    const redacted = await call();
    expect(redacted).toEqual({ callId: '1', content: 'redacted', isError: false });
    decide = () => ({ kind: 'accept', content: 'redacted', output: { secret: 'x' } });
    expect(await call()).toEqual({ callId: '1', content: 'redacted', isError: false, output: { secret: 'x' } });
    decide = (r) => ({ kind: 'accept', output: { wrapped: r.output ?? null } });
    const wrapped = await call();
    expect(wrapped).toEqual({ callId: '1', content: '{"secret":1}', isError: false, output: { wrapped: { secret: 1 } } });
    expect(Object.isFrozen(wrapped.output)).toBe(true);
    decide = () => ({ kind: 'accept', output: { bad: NaN } });
    expect((await call()).error?.code).toBe('EXECUTION_ERROR');
    await server.dispose();
  });
});

describe('shown (SPEC 11.3)', () => {
  test('a tool that was not shown is UNKNOWN_TOOL, given an assembly or tool names', async () => {
    const { server, app } = await toolServer();
    const t = app.get(Tools);
    const body = jest.fn(() => 'ran');
    t.register(tool('a', body));
    t.register(tool('b', body));
    const assembly: PromptAssembly = { sections: [], tools: t.schemas().filter((s) => s.name === 'a'), variables: {} };
    expect((await t.execute({ callId: '1', name: 'a', arguments: {} }, { shown: assembly })).content).toBe('ran');
    expect((await t.execute({ callId: '2', name: 'b', arguments: {} }, { shown: assembly })).error).toEqual({ code: 'UNKNOWN_TOOL', message: 'unknown tool "b"' });
    expect((await t.execute({ callId: '3', name: 'b', arguments: {} }, { shown: ['b'] })).content).toBe('ran');
    expect((await t.execute({ callId: '4', name: 'a', arguments: {} }, { shown: [] })).error?.code).toBe('UNKNOWN_TOOL');
    expect((await t.execute({ callId: '5', name: 'b', arguments: {} }, {})).content).toBe('ran');
    expect(body).toHaveBeenCalledTimes(3);
    await server.dispose();
  });

  test('a malformed shown is INVALID_ARGS, never a throw; observers still see the call once', async () => {
    const { server, app } = await toolServer();
    const t = app.get(Tools);
    const body = jest.fn(() => 'ran');
    t.register(tool('a', body));
    const seen: ToolResult[] = [];
    app.get(Events).on('tools/result', (_e: ToolExecution, r: ToolResult) => void seen.push(r));
    const hostile = new Proxy({}, { get: () => { throw new Error('trap'); } });
    const bad: unknown[] = [null, 'a', 42, { tools: 'a' }, { tools: [{ nom: 'a' }] }, ['a', 1], hostile, { shown: hostile }];
    const options: unknown[] = [...bad.map((shown) => ({ shown })), 'not an object', hostile];
    for (const o of options) {
      const r = await t.execute({ callId: 'c', name: 'a', arguments: {} }, o as never);
      expect(r.error?.code).toBe('INVALID_ARGS');
      expect(r.error?.message).toMatch(/Tools\.execute\(call, \{ shown \}\) for tool "a"/);
    }
    expect(body).not.toHaveBeenCalled();
    expect(seen).toHaveLength(options.length);
    await server.dispose();
  });
});
