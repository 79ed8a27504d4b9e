/**
 * SPEC §10.2 on the context tree: `ctx.signal`, in-flight tracking (contract C1, driven
 * here through the test probe's `trackWork`), quiescence bounded by `disposeTimeoutMs`,
 * and concurrent cleanups.
 */
import { ContextDisposedError, DisposeTimeoutError, Server, token, type SystemContext } from '../../src/index.js';
import { probe, type TrackedWork } from '../../src/testing/probe.js';

async function server(options?: ConstructorParameters<typeof Server>[0]): Promise<Server> {
  const s = new Server(options);
  await s.finish();
  return s;
}

/** An in-flight work whose settling the test controls. */
function work(label: string, log: string[] = []) {
  let settle!: () => void;
  const settled = new Promise<void>((r) => (settle = r));
  const w = {
    label,
    reasons: [] as unknown[],
    giveUps: 0,
    abort(reason: () => unknown) {
      w.reasons.push(reason());
      log.push(`abort ${label}`);
    },
    settled,
    giveUp() {
      w.giveUps++;
      log.push(`giveUp ${label}`);
    },
    settle: () => {
      log.push(`settle ${label}`);
      settle();
    },
  };
  return w satisfies TrackedWork;
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('ctx.signal', () => {
  test('made on first read, the same object every time, not aborted while the context lives', async () => {
    const s = await server();
    const ctx = s.createContext().child();
    const sig = ctx.signal;
    expect(sig).toBeInstanceOf(AbortSignal);
    expect(sig.aborted).toBe(false);
    expect(ctx.signal).toBe(sig);
    expect(ctx.child().signal).not.toBe(sig);
    await s.dispose();
    expect(ctx.signal).toBe(sig);
  });

  test('aborted with a ContextDisposedError the moment the disposal of the context starts (synchronously)', async () => {
    const s = await server();
    const ctx = s.createContext();
    const sig = ctx.signal;
    const seen: unknown[] = [];
    sig.addEventListener('abort', () => seen.push(ctx.isDisposed));
    let release!: () => void;
    ctx.onDispose(() => new Promise<void>((r) => (release = r)));
    const p = ctx.dispose();
    expect(sig.aborted).toBe(true);
    expect(sig.reason).toBeInstanceOf(ContextDisposedError);
    expect((sig.reason as Error).message).toMatch(/disposal of the context at depth 0 started/);
    // every context of the subtree is marked before any abort listener runs
    expect(seen).toEqual([true]);
    await tick();
    release();
    await p;
    await s.dispose();
  });

  test('aborted when the disposal of any ancestor starts; siblings and the ancestor’s parent are untouched', async () => {
    const s = await server();
    const root = s.createContext();
    const agent = root.child();
    const session = agent.child();
    const turn = session.child();
    const other = root.child();
    const sigs = [turn.signal, session.signal, agent.signal];
    void agent.dispose();
    expect(sigs.map((x) => x.aborted)).toEqual([true, true, true]);
    // one reason per disposal start, naming the context whose disposal started
    expect(new Set(sigs.map((x) => x.reason)).size).toBe(1);
    expect((turn.signal.reason as Error).message).toMatch(/context at depth 1/);
    expect(root.signal.aborted).toBe(false);
    expect(other.signal.aborted).toBe(false);
    await s.dispose();
    expect(root.signal.aborted).toBe(true);
  });

  test('readable on a disposed context, and already aborted when first read after disposal started', async () => {
    const s = await server();
    const root = s.createContext();
    const turn = root.child().child();
    const p = root.dispose();
    expect(turn.isDisposed).toBe(true);
    expect(turn.signal.aborted).toBe(true);
    expect(turn.signal.reason).toBeInstanceOf(ContextDisposedError);
    await p;
    const late = s.createContext();
    await late.dispose();
    expect(late.signal.aborted).toBe(true);
    expect(() => late.get(Server)).toThrow(ContextDisposedError);
    await s.dispose();
  });

  test('a context whose disposal starts with a prelude (an agent) is aborted before the prelude runs', async () => {
    const s = await server();
    const root = s.createContext();
    const agent = root.child();
    const turn = agent.child();
    const log: string[] = [];
    turn.signal.addEventListener('abort', () => log.push('turn aborted'));
    probe.setPrelude(agent, async () => {
      log.push(`prelude (agent live: ${!agent.isDisposed})`);
      // a child made during the prelude is born aborted
      log.push(`late child aborted: ${agent.child().signal.aborted}`);
      await tick();
    });
    const p = agent.dispose();
    expect(agent.signal.aborted).toBe(true);
    await p;
    expect(log).toEqual(['turn aborted', 'prelude (agent live: true)', 'late child aborted: true']);
    await s.dispose();
  });

  test('server.dispose() disposes the roots newest first: an older root’s signal is aborted only when its own disposal starts', async () => {
    const s = await server();
    const a = s.createContext();
    const b = s.createContext();
    const log: string[] = [];
    const sa = a.signal;
    const sb = b.signal;
    a.onDispose(() => void log.push(`a cleanup (a aborted: ${sa.aborted})`));
    b.onDispose(() => void log.push(`b cleanup (a aborted: ${sa.aborted}, b aborted: ${sb.aborted})`));
    await s.dispose();
    expect(log).toEqual(['b cleanup (a aborted: false, b aborted: true)', 'a cleanup (a aborted: true)']);
  });
});

describe('in-flight work (tracked on a context)', () => {
  test('disposal aborts tracked work at once, awaits it before the context’s own cleanups, then gives it up', async () => {
    const s = await server();
    const root = s.createContext();
    const turn = root.child();
    const log: string[] = [];
    const w = work('tool "refund" (call c1)', log);
    const untrack = probe.trackWork(turn, w);
    const turnSignal = turn.signal;
    turn.onDispose(() => void log.push('turn cleanup'));
    root.onDispose(() => void log.push('root cleanup'));
    const p = root.dispose();
    expect(w.reasons).toHaveLength(1);
    expect(w.reasons[0]).toBeInstanceOf(ContextDisposedError);
    expect(w.reasons[0]).toBe(turnSignal.reason);
    await tick();
    await tick();
    expect(log).toEqual(['abort tool "refund" (call c1)']);
    w.settle();
    untrack();
    await p;
    expect(log).toEqual(['abort tool "refund" (call c1)', 'settle tool "refund" (call c1)', 'giveUp tool "refund" (call c1)', 'turn cleanup', 'root cleanup']);
    expect(w.giveUps).toBe(1);
    await s.dispose();
  });

  test('untracked work is neither aborted nor awaited', async () => {
    const s = await server();
    const ctx = s.createContext();
    const w = work('done');
    const untrack = probe.trackWork(ctx, w);
    untrack();
    untrack();
    await ctx.dispose();
    expect(w.reasons).toEqual([]);
    expect(w.giveUps).toBe(0);
    await s.dispose();
  });

  test('work outliving disposeTimeoutMs: disposal goes on (cleanups run, locals disposed) and rejects naming it', async () => {
    const s = await server({ disposeTimeoutMs: 30 });
    const ctx = s.createContext();
    const log: string[] = [];
    const hung = work('tool "mcp_call" (call c9)', log);
    const quick = work('system summarize', log);
    probe.trackWork(ctx, hung);
    probe.trackWork(ctx, quick);
    ctx.insert(token<Disposable>('L'), { [Symbol.dispose]: () => void log.push('local disposed') });
    ctx.onDispose(() => void log.push('cleanup'));
    const p = ctx.dispose();
    quick.settle();
    const err = (await p.then(() => undefined, (e: unknown) => e)) as AggregateError;
    expect(err).toBeInstanceOf(AggregateError);
    expect(err.errors).toHaveLength(1);
    expect(err.errors[0]).toBeInstanceOf(DisposeTimeoutError);
    expect((err.errors[0] as DisposeTimeoutError).label).toBe('tool "mcp_call" (call c9)');
    expect((err.errors[0] as DisposeTimeoutError).timeoutMs).toBe(30);
    expect(err.message).toMatch(/tool "mcp_call" \(call c9\) was still running when the disposal of the context at depth 0 stopped waiting for it after 30 ms/);
    // both were given up (settled or not), then the cleanups and the locals ran
    expect(log).toEqual([
      'abort tool "mcp_call" (call c9)',
      'abort system summarize',
      'settle system summarize',
      'giveUp tool "mcp_call" (call c9)',
      'giveUp system summarize',
      'cleanup',
      'local disposed',
    ]);
    await s.dispose();
  });

  test('disposeTimeoutMs 0 does not wait at all', async () => {
    const s = await server({ disposeTimeoutMs: 0 });
    const ctx = s.createContext();
    const w = work('never');
    probe.trackWork(ctx, w);
    await expect(ctx.dispose()).rejects.toThrow(/never was still running/);
    expect(w.giveUps).toBe(1);
    await s.dispose();
  });

  test('work tracked while the disposal waits is aborted at once and awaited too; after the wait it is aborted and given up at once', async () => {
    const s = await server();
    const ctx = s.createContext();
    const first = work('first');
    probe.trackWork(ctx, first);
    const p = ctx.dispose();
    const late = work('late');
    probe.trackWork(ctx, late);
    expect(late.reasons).toHaveLength(1);
    first.settle();
    await tick();
    await tick();
    let done = false;
    void p.then(() => (done = true));
    await tick();
    expect(done).toBe(false);
    late.settle();
    await p;
    expect([first.giveUps, late.giveUps]).toEqual([1, 1]);
    const after = work('after');
    probe.trackWork(ctx, after);
    expect(after.reasons).toHaveLength(1);
    expect(after.giveUps).toBe(1);
    await s.dispose();
  });

  test('an abort that throws is collected; the others are still aborted and the disposal completes', async () => {
    const s = await server();
    const ctx = s.createContext();
    const ok = work('ok');
    ok.settle();
    probe.trackWork(ctx, { label: 'bad', settled: Promise.resolve(), abort: () => { throw new Error('abort failed'); } });
    probe.trackWork(ctx, ok);
    await expect(ctx.dispose()).rejects.toThrow(/abort failed/);
    expect(ok.reasons).toHaveLength(1);
    await s.dispose();
  });

  test('descendants are quiesced first; one deadline bounds the whole disposal', async () => {
    const s = await server({ disposeTimeoutMs: 40 });
    const root = s.createContext();
    const session = root.child();
    const turn = session.child();
    probe.trackWork(turn, work('turn work'));
    probe.trackWork(session, work('session work'));
    const err = (await root.dispose().then(() => undefined, (e: unknown) => e)) as AggregateError;
    expect(err.errors.map((e) => (e as DisposeTimeoutError).label)).toEqual(['turn work', 'session work']);
    await s.dispose();
  });
});

describe('onDispose(fn, { concurrent: true })', () => {
  test('each maximal run of adjacent concurrent cleanups starts together and settles before the next cleanup', async () => {
    const s = await server();
    const ctx = s.createContext();
    const log: string[] = [];
    const gates = new Map<string, () => void>();
    const slow = (name: string) => () =>
      new Promise<void>((r) => {
        log.push(`start ${name}`);
        gates.set(name, () => {
          log.push(`end ${name}`);
          r();
        });
      });
    ctx.onDispose(slow('A'));
    ctx.onDispose(slow('B'), { concurrent: true });
    ctx.onDispose(slow('C'), { concurrent: true });
    ctx.onDispose(slow('D'));
    ctx.onDispose(slow('E'), { concurrent: true });
    const p = ctx.dispose();
    const step = async (name: string): Promise<void> => {
      await tick();
      gates.get(name)?.();
      await tick();
    };
    await tick();
    expect(log).toEqual(['start E']);
    await step('E');
    expect(log.slice(-1)).toEqual(['start D']);
    await step('D');
    // C and B (last registered first) start together
    expect(log.slice(-2)).toEqual(['start C', 'start B']);
    await step('B');
    expect(log.slice(-1)).toEqual(['end B']);
    await step('C');
    expect(log.slice(-2)).toEqual(['end C', 'start A']);
    await step('A');
    await p;
    expect(log).toEqual(['start E', 'end E', 'start D', 'end D', 'start C', 'start B', 'end B', 'end C', 'start A', 'end A']);
    await s.dispose();
  });

  test('a failing concurrent cleanup does not stop its neighbours; the errors are collected', async () => {
    const s = await server();
    const ctx = s.createContext();
    const ran: string[] = [];
    ctx.onDispose(() => void ran.push('plain'));
    ctx.onDispose(async () => {
      ran.push('x');
      throw new Error('x failed');
    }, { concurrent: true });
    ctx.onDispose(() => void ran.push('y'), { concurrent: true });
    await expect(ctx.dispose()).rejects.toThrow(/x failed/);
    expect(ran).toEqual(['y', 'x', 'plain']);
    await s.dispose();
  });

  test('options are validated', async () => {
    const s = await server();
    const ctx: SystemContext = s.createContext();
    expect(() => ctx.onDispose(() => undefined, { concurrent: 'yes' } as never)).toThrow(/concurrent must be a boolean/);
    expect(() => ctx.onDispose(() => undefined, 5 as never)).toThrow(/options must be an object/);
    const off = ctx.onDispose(() => undefined, { concurrent: false });
    off();
    await s.dispose();
  });
});
