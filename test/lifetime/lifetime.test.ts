import { ContextDisposedError, DisposeTimeoutError } from '../../src/context/errors.js';
import { Lifetime } from '../../src/lifetime/lifetime.js';

describe('Lifetime', () => {
  test('state goes open → closing → closed; close() is memoized', async () => {
    const lt = Lifetime.root({ label: 'job' });
    expect(lt.state).toBe('open');
    let seen: string | undefined;
    lt.addFinalizer(async () => {
      seen = lt.state;
      await Promise.resolve();
    });
    const p = lt.close();
    expect(lt.close()).toBe(p);
    await p;
    expect(seen).toBe('closing');
    expect(lt.state).toBe('closed');
    expect(() => lt.addFinalizer(() => 0)).toThrow(ContextDisposedError);
  });

  test('a fork is closed by its parent, newest first, before the parent finalizers; its errors reach the parent', async () => {
    const root = Lifetime.root({ label: 'root' });
    const order: string[] = [];
    root.addFinalizer(() => void order.push('root'));
    const a = root.fork();
    a.addFinalizer(() => void order.push('a'));
    const b = root.fork();
    b.addFinalizer(() => {
      order.push('b');
      throw new Error('b failed');
    });
    await expect(root.close()).rejects.toThrow(/b failed/);
    expect(order).toEqual(['b', 'a', 'root']);
    expect(a.state).toBe('closed');
  });

  test('the whole subtree is closing before any abort listener runs', async () => {
    const root = Lifetime.root();
    const kid = root.fork();
    const states: string[] = [];
    root.signal.addEventListener('abort', () => states.push(kid.state));
    kid.signal.addEventListener('abort', () => states.push(root.state));
    await root.close();
    expect(states).toEqual(['closing', 'closing']);
    expect(kid.signal.reason).toBeInstanceOf(ContextDisposedError);
  });

  test('track(work): aborted when the close starts, awaited, given up; one past the bound is named', async () => {
    const lt = Lifetime.root({ label: 'job', timeoutMs: 20 });
    const log: string[] = [];
    let finish!: () => void;
    const settled = new Promise<void>((r) => (finish = r));
    lt.track({ label: 'quick', abort: () => void (log.push('abort quick'), finish()), settled, giveUp: () => void log.push('give up quick') });
    lt.track({ label: 'hung', abort: () => void log.push('abort hung'), settled: new Promise(() => undefined), giveUp: () => void log.push('give up hung') });
    const err = (await lt.close().catch((e: unknown) => e)) as AggregateError;
    expect(err.errors).toHaveLength(1);
    expect(err.errors[0]).toBeInstanceOf(DisposeTimeoutError);
    expect((err.errors[0] as DisposeTimeoutError).label).toBe('hung');
    expect(log).toEqual(['abort quick', 'abort hung', 'give up quick', 'give up hung']);
    const late: string[] = [];
    lt.track({ label: 'late', abort: () => void late.push('abort'), settled: Promise.resolve(), giveUp: () => void late.push('give up') });
    expect(late).toEqual(['abort', 'give up']);
  });

  test('a removed finalizer does not run', async () => {
    const lt = Lifetime.root();
    let ran = 0;
    const off = lt.addFinalizer(() => void ran++);
    off();
    await lt.close();
    expect(ran).toBe(0);
  });
});
