import { jest } from '@jest/globals';
import { Approval, Events, Tools, createScope, type ToolExecution, type ToolResult } from '../../src/index.js';
import { tool, toolServer } from './helpers.js';

async function world() {
  const { server, app } = await toolServer();
  const results: [ToolExecution, ToolResult][] = [];
  app.get(Events).on('tools/result', (e: ToolExecution, r: ToolResult) => void results.push([e, r]));
  return { server, app, t: app.get(Tools), ev: app.get(Events), results };
}

describe('Tools.execute', () => {
  test('success: the body gets detached frozen args and the execution; this = the definition', async () => {
    const { server, t, results } = await world();
    let seen: { args: unknown; exe: ToolExecution; self: unknown } | undefined;
    const def = {
      ...tool('echo'),
      execute(this: unknown, args: unknown, exe: ToolExecution) {
        seen = { args, exe, self: this };
        return { got: args };
      },
    };
    t.register(def);
    const input = { q: 'hi' };
    const r = await t.execute({ callId: 'c1', name: 'echo', arguments: input });
    expect(r).toEqual({ callId: 'c1', content: '{"got":{"q":"hi"}}', isError: false, output: { got: { q: 'hi' } } });
    expect(Object.isFrozen(r)).toBe(true);
    expect(seen?.self).toBe(def);
    expect(seen?.args).toEqual(input);
    expect(seen?.args).not.toBe(input);
    expect(Object.isFrozen(seen?.args)).toBe(true);
    const exe = seen?.exe as ToolExecution;
    expect(Object.isFrozen(exe)).toBe(true);
    expect(exe.callId).toBe('c1');
    expect(exe.name).toBe('echo');
    expect(exe.scope).toBeUndefined();
    expect(Object.isFrozen(exe.token)).toBe(true);
    expect(Reflect.ownKeys(exe.token)).toEqual([]);
    expect(Object.getPrototypeOf(exe.token)).toBeNull();
    expect(results).toHaveLength(1);
    expect(results[0][0]).toBe(exe);
    expect(results[0][1]).toEqual(r);
    await t.execute({ callId: 'c1', name: 'echo', arguments: input });
    expect(results[1][0].token).not.toBe(exe.token);
    await server.dispose();
  });

  test('content: string as is, undefined as "", JSON stringified otherwise, non-lossless → EXECUTION_ERROR', async () => {
    const { server, t } = await world();
    t.register(tool('s', () => 'text'));
    t.register(tool('u', () => undefined));
    t.register(tool('n', async () => 42));
    t.register(tool('bad', () => new Map()));
    t.register(tool('nan', () => ({ x: NaN })));
    const call = (name: string) => t.execute({ callId: name, name, arguments: {} });
    expect((await call('s')).content).toBe('text');
    expect((await call('u')).content).toBe('');
    expect((await call('n')).content).toBe('42');
    const bad = await call('bad');
    expect(bad.error?.code).toBe('EXECUTION_ERROR');
    expect(bad.content).toMatch(/^Error: tool "bad" returned a result that is not losslessly JSON-serializable: result is a Map instance/);
    expect((await call('nan')).content).toMatch(/result\.x is NaN/);
    await server.dispose();
  });

  test('a throwing body is EXECUTION_ERROR with its message', async () => {
    const { server, t, results } = await world();
    t.register(tool('boom', () => {
      throw new Error('kaput');
    }));
    t.register(tool('reject', async () => Promise.reject(new Error('later'))));
    expect(await t.execute({ callId: '1', name: 'boom', arguments: {} })).toEqual({
      callId: '1', content: 'Error: kaput', isError: true, error: { code: 'EXECUTION_ERROR', message: 'kaput' },
    });
    expect((await t.execute({ callId: '2', name: 'reject', arguments: {} })).content).toBe('Error: later');
    expect(results.map(([, r]) => r.error?.code)).toEqual(['EXECUTION_ERROR', 'EXECUTION_ERROR']);
    await server.dispose();
  });

  test('INVALID_ARGS: JSON-Schema violation (ajv message) and non-lossless arguments; never reaches policy', async () => {
    const { server, t, ev, results } = await world();
    const body = jest.fn(() => 'ran');
    const pre = jest.fn((d: unknown) => d);
    ev.on('tools/pre-execute' as string, pre);
    t.register(tool('s', body));
    const r1 = await t.execute({ callId: '1', name: 's', arguments: { q: 5 } });
    expect(r1.error?.code).toBe('INVALID_ARGS');
    expect(r1.content).toBe('Error: invalid arguments for tool "s": arguments/q must be string');
    const r2 = await t.execute({ callId: '2', name: 's', arguments: { q: 'x', extra: 1 } });
    expect(r2.content).toMatch(/must NOT have additional properties/);
    const cyc: Record<string, unknown> = {};
    cyc.self = cyc;
    // eslint-disable-next-line no-sparse-arrays
    for (const bad of [new Map(), { q: NaN }, { q: undefined }, cyc, [1, , 2], { q: -0 }, { q: 1n }, new Date(0), { q: () => 1 }]) {
      const r = await t.execute({ callId: 'x', name: 's', arguments: bad });
      expect(r.error?.code).toBe('INVALID_ARGS');
      expect(r.content).toMatch(/^Error: invalid arguments for tool "s": tool arguments must be losslessly JSON-serializable: arguments/);
    }
    expect(body).not.toHaveBeenCalled();
    expect(pre).not.toHaveBeenCalled();
    expect(results).toHaveLength(11);
    expect(results.every(([e, r]) => Object.isFrozen(e) && Object.isFrozen(r) && r.isError)).toBe(true);
    expect(results[2][0].arguments).toBeUndefined();
    await server.dispose();
  });

  test('UNKNOWN_TOOL wins over bad arguments; malformed calls resolve, never throw', async () => {
    const { server, t, results } = await world();
    const r = await t.execute({ callId: '1', name: 'nope', arguments: new Map() });
    expect(r.error).toEqual({ code: 'UNKNOWN_TOOL', message: 'unknown tool "nope"' });
    for (const call of [null, 5, { callId: {}, name: 'x', arguments: {} }, { callId: '1', name: 3, arguments: {} }, { callId: '1', name: 'x', arguments: {}, scope: 'A' }, { callId: '1', name: 'x', arguments: {}, parent: {} }, { callId: '1', name: 'x', arguments: {}, signal: {} }]) {
      const res = await t.execute(call as never);
      expect(res.isError).toBe(true);
      expect(['INVALID_ARGS', 'UNKNOWN_TOOL']).toContain(res.error?.code);
    }
    const getterThrows = { callId: '1', name: 'x', get arguments() { throw new Error('trap'); } };
    expect((await t.execute(getterThrows as never)).content).toMatch(/reading the call's "arguments" threw: trap/);
    expect(results).toHaveLength(9);
    await server.dispose();
  });

  test('each call field is read once, in order; after a throwing one the rest are still read (the first failure is the one reported)', async () => {
    const { server, t, results } = await world();
    t.register(tool('s'));
    for (const throwing of ['callId', 'name', 'arguments', 'scope', 'parent', 'signal']) {
      const reads: string[] = [];
      const call = {};
      const values: Record<string, unknown> = { callId: 'c', name: 's', arguments: {} };
      for (const key of ['callId', 'name', 'arguments', 'scope', 'parent', 'signal']) {
        Object.defineProperty(call, key, {
          enumerable: true,
          get: () => {
            reads.push(key);
            if (key === throwing || (throwing === 'callId' && key === 'signal')) throw new Error(`no ${key}`);
            return values[key];
          },
        });
      }
      const r = await t.execute(call as never);
      expect(reads).toEqual(['callId', 'name', 'arguments', 'scope', 'parent', 'signal']);
      expect(r.error?.code).toBe('INVALID_ARGS');
      expect(r.content).toContain(`reading the call's "${throwing}" threw: no ${throwing}`);
      // the fields read after the throwing one still reach the execution
      if (throwing !== 'name') expect(results[results.length - 1]?.[0].name).toBe('s');
    }
    await server.dispose();
  });

  test('parent must be a token minted by the registry', async () => {
    const { server, t } = await world();
    let outer: ToolExecution | undefined;
    let inner: ToolExecution | undefined;
    t.register(tool('inner', (_a) => 'in'));
    t.register(tool('outer', async () => {
      const r = await t.execute({ callId: 'i', name: 'inner', arguments: {}, parent: (outer as ToolExecution).token });
      return r.content;
    }));
    const ev = t.context.get(Events);
    ev.on('tools/result', (e: ToolExecution) => {
      if (e.name === 'outer') outer = e;
      else inner = e;
    });
    ev.on('tools/pre-execute' as string, (d: unknown, e: ToolExecution) => {
      if (e.name === 'outer') outer = e;
      return d;
    });
    expect((await t.execute({ callId: 'o', name: 'outer', arguments: {} })).content).toBe('in');
    expect(inner?.parent).toBe(outer?.token);
    const fake = Object.freeze(Object.create(null));
    expect((await t.execute({ callId: 'f', name: 'inner', arguments: {}, parent: fake })).error?.code).toBe('INVALID_ARGS');
    await server.dispose();
  });
});

describe('tools/pre-execute, Approval and guards', () => {
  test('deny → DENIED "Error: <reason>"; malformed and throwing decisions deny', async () => {
    const { server, t, ev, results } = await world();
    const body = jest.fn(() => 'ran');
    t.register(tool('x', body));
    const off = ev.on('tools/pre-execute', () => ({ kind: 'deny', reason: 'not today' }));
    expect(await t.execute({ callId: '1', name: 'x', arguments: {} })).toEqual({
      callId: '1', content: 'Error: not today', isError: true, error: { code: 'DENIED', message: 'not today' },
    });
    off();
    for (const bad of [undefined, null, 'allow', { kind: 'maybe' }, {}]) {
      const o = ev.on('tools/pre-execute' as string, () => bad);
      const r = await t.execute({ callId: '1', name: 'x', arguments: {} });
      expect(r.error?.code).toBe('DENIED');
      expect(r.content).toMatch(/malformed tools\/pre-execute decision/);
      o();
    }
    const o2 = ev.on('tools/pre-execute', async () => {
      throw new Error('policy down');
    });
    expect((await t.execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('Error: a tools/pre-execute listener failed: policy down');
    o2();
    expect(body).not.toHaveBeenCalled();
    expect((await t.execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('ran');
    expect(results).toHaveLength(8);
    await server.dispose();
  });

  test('the waterfall runs in order (prepended first) and sees the frozen execution', async () => {
    const { server, t, ev } = await world();
    t.register(tool('x'));
    const order: string[] = [];
    ev.on('tools/pre-execute' as string, (d: unknown, e: ToolExecution) => {
      order.push('second');
      expect(Object.isFrozen(e)).toBe(true);
      return d;
    });
    ev.on('tools/pre-execute', () => {
      order.push('first');
      return { kind: 'deny', reason: 'first says no' };
    }, { prepend: true });
    expect((await t.execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('Error: first says no');
    expect(order).toEqual(['first', 'second']);
    await server.dispose();
  });

  test('ask is denied without an Approval', async () => {
    const { server, t, ev } = await world();
    t.register(tool('x'));
    ev.on('tools/pre-execute', () => ({ kind: 'ask', reason: 'dangerous' }));
    const r = await t.execute({ callId: '1', name: 'x', arguments: {} });
    expect(r.error?.code).toBe('DENIED');
    expect(r.content).toBe('Error: approval required: dangerous, but no Approval is installed');
    await server.dispose();
  });

  test('ask is granted only when Approval.approve resolves exactly true', async () => {
    const answers: unknown[] = [true, false, 'yes', 1];
    const asked: [string, string | undefined][] = [];
    const approval = {
      approve: async (e: ToolExecution, reason: string | undefined) => {
        asked.push([e.name, reason]);
        return answers.shift() as boolean;
      },
    };
    const { server, app } = await toolServer({ id: 'approval', build: (s) => void s.insertGlobal(Approval, approval) });
    const t = app.get(Tools);
    t.register(tool('x', () => 'ran'));
    app.get(Events).on('tools/pre-execute', () => ({ kind: 'ask', reason: 'sure?' }));
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await t.execute({ callId: '1', name: 'x', arguments: {} })).content);
    expect(codes).toEqual(['ran', 'Error: not approved: sure?', 'Error: not approved: sure?', 'Error: not approved: sure?']);
    expect(asked).toEqual(Array(4).fill(['x', 'sure?']));
    await server.dispose();
  });

  test('a throwing Approval denies; an agent can have its own Approval as a local', async () => {
    const { server, app } = await toolServer({ id: 'approval', build: (s) => void s.insertGlobal(Approval, { approve: () => { throw new Error('ui gone'); } }) });
    app.get(Tools).register(tool('x', () => 'ran'));
    app.get(Events).on('tools/pre-execute', () => ({ kind: 'ask' }));
    expect((await app.get(Tools).execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('Error: approval required, but approve() failed: ui gone');
    const A = createScope(app, { id: 'A' });
    A.ctx.insert(Approval, { approve: () => true });
    expect((await A.ctx.get(Tools).execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('ran');
    await server.dispose();
  });

  test('guards: global first, then the scope; first denial wins; a throwing guard denies', async () => {
    const { server, app, ev } = await world();
    const A = createScope(app, { id: 'A' });
    const B = createScope(app, { id: 'B' });
    app.get(Tools).register(tool('x', () => 'ran'));
    const calls: string[] = [];
    A.ctx.get(Tools).guard(() => {
      calls.push('A1');
      return 'A says no';
    });
    A.ctx.get(Tools).guard(() => {
      calls.push('A2');
      return 'A2 says no';
    });
    B.ctx.get(Tools).guard(() => {
      calls.push('B');
      return 'B says no';
    });
    const offG = app.get(Tools).guard((e) => {
      calls.push('G');
      return e.arguments && (e.arguments as { q?: string }).q === 'stop' ? 'global stop' : undefined;
    });
    expect((await A.ctx.get(Tools).execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('Error: A says no');
    expect(calls).toEqual(['G', 'A1']);
    calls.length = 0;
    expect((await A.ctx.get(Tools).execute({ callId: '1', name: 'x', arguments: { q: 'stop' } })).content).toBe('Error: global stop');
    expect(calls).toEqual(['G']);
    calls.length = 0;
    expect((await app.get(Tools).execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('ran');
    expect(calls).toEqual(['G']);
    offG();
    app.get(Tools).guard(() => {
      throw new Error('guard crashed');
    });
    const r = await B.ctx.get(Tools).execute({ callId: '1', name: 'x', arguments: {} });
    expect(r).toEqual({ callId: '1', content: 'Error: a guard failed: guard crashed', isError: true, error: { code: 'DENIED', message: 'a guard failed: guard crashed' } });
    expect(ev).toBeDefined();
    await server.dispose();
  });

  test('a guard denial can not be undone by a prepended allow; a malformed guard result denies', async () => {
    const { server, t, ev } = await world();
    const body = jest.fn(() => 'ran');
    t.register(tool('x', body));
    t.guard(() => 'guarded');
    ev.on('tools/pre-execute', () => ({ kind: 'allow' }), { prepend: true });
    ev.on('tools/pre-execute', () => ({ kind: 'allow' }));
    expect((await t.execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('Error: guarded');
    const { server: s2, app: a2 } = await toolServer();
    a2.get(Tools).register(tool('y'));
    a2.get(Tools).guard(() => 42 as never);
    expect((await a2.get(Tools).execute({ callId: '1', name: 'y', arguments: {} })).error?.code).toBe('DENIED');
    expect(body).not.toHaveBeenCalled();
    await server.dispose();
    await s2.dispose();
  });

  test('guards are not consulted once pre-execute denied', async () => {
    const { server, t, ev } = await world();
    t.register(tool('x'));
    const g = jest.fn(() => undefined);
    t.guard(g);
    ev.on('tools/pre-execute', () => ({ kind: 'deny', reason: 'no' }));
    await t.execute({ callId: '1', name: 'x', arguments: {} });
    expect(g).not.toHaveBeenCalled();
    await server.dispose();
  });

  test('scoped policy listeners only govern their scope', async () => {
    const { server, app } = await world();
    app.get(Tools).register(tool('x', () => 'ran'));
    const A = createScope(app, { id: 'A' });
    const B = createScope(app, { id: 'B' });
    A.ctx.get(Events).on('tools/pre-execute', () => ({ kind: 'deny', reason: 'A policy' }));
    expect((await A.ctx.get(Tools).execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('Error: A policy');
    expect((await B.ctx.get(Tools).execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('ran');
    expect((await app.get(Tools).execute({ callId: '1', name: 'x', arguments: {}, scope: A.key })).content).toBe('Error: A policy');
    await server.dispose();
  });
});

describe('tools/execute, timeouts, tools/post-execute, tools/result', () => {
  test('tools/execute listeners wrap, replace or short-circuit the call function', async () => {
    const { server, t, ev } = await world();
    const body = jest.fn(() => 'body');
    t.register(tool('x', body));
    const order: string[] = [];
    const off1 = ev.on('tools/execute', (next: (e: ToolExecution) => Promise<unknown>) => async (e: ToolExecution) => {
      order.push('before');
      const v = await next(e);
      order.push('after');
      return `wrapped(${String(v)})`;
    });
    expect((await t.execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('wrapped(body)');
    expect(order).toEqual(['before', 'after']);
    off1();
    const off2 = ev.on('tools/execute', () => async () => 'short-circuited');
    expect((await t.execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('short-circuited');
    expect(body).toHaveBeenCalledTimes(1);
    off2();
    const off3 = ev.on('tools/execute' as string, () => 'not a function');
    expect((await t.execute({ callId: '1', name: 'x', arguments: {} })).error?.code).toBe('EXECUTION_ERROR');
    off3();
    ev.on('tools/execute' as string, (next: (e: unknown) => Promise<unknown>) => () => next({ fake: true }));
    expect((await t.execute({ callId: '1', name: 'x', arguments: {} })).content).toMatch(/must be called with the execution it was given/);
    expect(body).toHaveBeenCalledTimes(1);
    await server.dispose();
  });

  test('several tools/execute listeners compose: each receives the function the previous one returned', async () => {
    const { server, t, ev } = await world();
    t.register(tool('x', () => 'body'));
    const wrap = (label: string) => (next: (e: ToolExecution) => Promise<unknown>) => async (e: ToolExecution) => `${label}(${String(await next(e))})`;
    ev.on('tools/execute', wrap('inner'));
    ev.on('tools/execute', wrap('outer'));
    ev.on('tools/execute', wrap('first'), { prepend: true });
    expect((await t.execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('outer(inner(first(body)))');
    await server.dispose();
  });

  test('a call function kept by a tools/execute wrapper and called after its call is over throws a TypeError naming the call; the body does not run', async () => {
    const { server, t, ev } = await world();
    const body = jest.fn(() => 'body');
    t.register(tool('x', body));
    let kept: ((e: ToolExecution) => Promise<unknown>) | undefined;
    let keptExecution: ToolExecution | undefined;
    ev.on('tools/execute', (next: (e: ToolExecution) => Promise<unknown>) => async (e: ToolExecution) => {
      kept = next;
      keptExecution = e;
      return next(e);
    });
    expect((await t.execute({ callId: 'c1', name: 'x', arguments: {} })).content).toBe('body');
    expect(body).toHaveBeenCalledTimes(1);
    // the tool is still registered: only the call being over refuses the late call
    await expect((kept as (e: ToolExecution) => Promise<unknown>)(keptExecution as ToolExecution)).rejects.toThrow(
      new TypeError('tool "x" (call c1) is over: a tools/execute wrapper can only call the call function it was given while the call runs (before its result is settled)'),
    );
    expect(body).toHaveBeenCalledTimes(1);
    await server.dispose();
  });

  test('a tool unregistered (or its scope disposed) while the call waits for policy is not run: the call is aborted', async () => {
    const { server, app } = await world();
    const A = createScope(app, { id: 'A' });
    const body = jest.fn(() => 'ran');
    const off = A.ctx.get(Tools).register(tool('x', body));
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    app.get(Events).on('tools/pre-execute' as string, async (d: unknown) => {
      await gate;
      return d;
    });
    const p1 = A.ctx.get(Tools).execute({ callId: '1', name: 'x', arguments: {} });
    off();
    release();
    // SPEC 10.2: undoing the registration aborts the call (settled at once, policy pending)
    expect((await p1).error).toEqual({ code: 'EXECUTION_ERROR', message: expect.stringMatching(/^tool "x" was aborted: the registration of tool "x" was undone/) });
    A.ctx.get(Tools).register(tool('x', body));
    const p2 = app.get(Tools).execute({ callId: '2', name: 'x', arguments: {}, scope: A.key });
    await A.dispose();
    expect((await p2).error?.message).toMatch(/^tool "x" was aborted: .*disposal/);
    // the same when it vanishes while a tools/execute wrapper awaits before calling through
    const off3 = app.get(Tools).register(tool('y', body));
    let release2: () => void = () => undefined;
    const gate2 = new Promise<void>((r) => (release2 = r));
    app.get(Events).on('tools/execute', (next: (e: ToolExecution) => Promise<unknown>) => async (e: ToolExecution) => {
      await gate2;
      return next(e);
    });
    const p3 = app.get(Tools).execute({ callId: '3', name: 'y', arguments: {} });
    await new Promise((r) => setImmediate(r));
    off3();
    release2();
    expect((await p3).error?.message).toMatch(/^tool "y" was aborted: the registration of tool "y" was undone/);
    expect(body).not.toHaveBeenCalled();
    await server.dispose();
  });

  test('timeoutMs: TIMEOUT result and the execution signal aborts', async () => {
    const { server, t } = await world();
    let signal: AbortSignal | undefined;
    const honours = (e: ToolExecution) => new Promise((_r, reject) => e.signal.addEventListener('abort', () => reject(e.signal.reason)));
    t.register({ ...tool('slow'), timeoutMs: 20, execute: (_a: unknown, e: ToolExecution) => honours(e) });
    t.register({ ...tool('slow2'), timeoutMs: 20, execute: (_a: unknown, e: ToolExecution) => {
      signal = e.signal;
      return honours(e);
    } });
    t.register(tool('fast', () => 'ok', { timeoutMs: 1000 }));
    const r = await t.execute({ callId: '1', name: 'slow2', arguments: {} });
    expect(r).toEqual({ callId: '1', content: 'Error: tool "slow2" timed out after 20 ms', isError: true, error: { code: 'TIMEOUT', message: 'tool "slow2" timed out after 20 ms' } });
    expect(signal?.aborted).toBe(true);
    expect((signal?.reason as DOMException).name).toBe('TimeoutError');
    expect((await t.execute({ callId: '1', name: 'slow', arguments: {} })).error?.code).toBe('TIMEOUT');
    expect((await t.execute({ callId: '1', name: 'fast', arguments: {} })).content).toBe('ok');
    await server.dispose();
  });

  test('the caller signal aborts the call (EXECUTION_ERROR) and reaches the body', async () => {
    const { server, t } = await world();
    let seen: AbortSignal | undefined;
    t.register({ ...tool('wait'), execute: (_a: unknown, e: ToolExecution) => {
      seen = e.signal;
      return new Promise((_r, reject) => e.signal.addEventListener('abort', () => reject(e.signal.reason)));
    } });
    const ac = new AbortController();
    const p = t.execute({ callId: '1', name: 'wait', arguments: {}, signal: ac.signal });
    setTimeout(() => ac.abort(new Error('user cancelled')), 5);
    const r = await p;
    expect(r.error?.code).toBe('EXECUTION_ERROR');
    expect(r.content).toBe('Error: tool "wait" was aborted: user cancelled');
    // execution.signal is the call's own signal, chained to the caller's
    expect(seen?.aborted).toBe(true);
    expect((seen?.reason as Error).message).toBe('user cancelled');
    const r2 = await t.execute({ callId: '2', name: 'wait', arguments: {}, signal: AbortSignal.abort('early') });
    expect(r2.content).toBe('Error: tool "wait" was aborted: early');
    await server.dispose();
  });

  test('post-execute: accept replaces content, block denies, malformed denies', async () => {
    const { server, t, ev } = await world();
    t.register(tool('x', () => 'secret'));
    const off = ev.on('tools/post-execute', (d: unknown, _e: ToolExecution, r: ToolResult) => ({ kind: 'accept', content: r.content.toUpperCase() }));
    expect((await t.execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('SECRET');
    off();
    const off2 = ev.on('tools/post-execute', () => ({ kind: 'accept' }));
    expect((await t.execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('secret');
    off2();
    const off3 = ev.on('tools/post-execute', () => ({ kind: 'block', reason: 'leaks a secret' }));
    expect(await t.execute({ callId: '1', name: 'x', arguments: {} })).toEqual({
      callId: '1', content: 'Error: leaks a secret', isError: true, error: { code: 'DENIED', message: 'leaks a secret' },
    });
    off3();
    ev.on('tools/post-execute' as string, () => 'ok');
    expect((await t.execute({ callId: '1', name: 'x', arguments: {} })).content).toMatch(/^Error: malformed tools\/post-execute decision/);
    await server.dispose();
  });

  test('tools/result: once per call incl. refused ones, frozen snapshots, a failing observer does not stop later ones nor change the result', async () => {
    const { server, app } = await toolServer();
    const ev = app.get(Events);
    const t = app.get(Tools);
    t.register(tool('x', () => ({ a: [1, 2] })));
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const seen: string[] = [];
    ev.on('tools/result', (e: ToolExecution, r: ToolResult) => {
      seen.push(`first:${e.name}:${r.error?.code ?? 'ok'}:${Object.isFrozen(e) && Object.isFrozen(r)}`);
      (r as { content: string }).content = 'tampered'; // throws: the snapshot is frozen
    });
    ev.on('tools/result', () => {
      throw new Error('observer crashed');
    });
    ev.on('tools/result', async () => {
      await Promise.resolve();
      throw new Error('async observer crashed');
    });
    ev.on('tools/result', async (e: ToolExecution) => {
      seen.push(`after-failing:${e.name}`);
    });
    t.guard((e) => (e.callId === 'deny' ? 'no' : undefined));
    const ok = await t.execute({ callId: '1', name: 'x', arguments: {} });
    expect(ok.content).toBe('{"a":[1,2]}');
    await t.execute({ callId: 'deny', name: 'x', arguments: {} });
    await t.execute({ callId: '3', name: 'missing', arguments: {} });
    await t.execute({ callId: '4', name: 'x', arguments: { q: 1 } });
    expect(seen).toEqual([
      'first:x:ok:true', 'after-failing:x',
      'first:x:DENIED:true', 'after-failing:x',
      'first:missing:UNKNOWN_TOOL:true', 'after-failing:missing',
      'first:x:INVALID_ARGS:true', 'after-failing:x',
    ]);
    expect(warn).toHaveBeenCalledTimes(12); // the tampering observer and the two crashing ones, for each of 4 calls
    expect(String(warn.mock.calls[0][0])).toMatch(/tools\/result observer/);
    warn.mockRestore();
    await server.dispose();
  });

  test('tools/result observers are scope-filtered by the execution scope', async () => {
    const { server, app } = await toolServer();
    app.get(Tools).register(tool('x'));
    const A = createScope(app, { id: 'A' });
    const B = createScope(app, { id: 'B' });
    const seen: string[] = [];
    A.ctx.get(Events).on('tools/result', () => void seen.push('A'));
    B.ctx.get(Events).on('tools/result', () => void seen.push('B'));
    await A.ctx.get(Tools).execute({ callId: '1', name: 'x', arguments: {} });
    await app.get(Tools).execute({ callId: '1', name: 'x', arguments: {} });
    expect(seen).toEqual(['A']);
    await server.dispose();
  });
});
