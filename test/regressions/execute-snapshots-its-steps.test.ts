/**
 * Bug (issue 8 #13): `ctx.execute(steps)` read its array live. A step pushed after the
 * call ran, and a step that was checked was not necessarily the one that ran (an array
 * element with a getter could answer a system when checked and something else later).
 * Fixed: the array is read once, every step is checked before anything runs, and the
 * copy is what runs. `loop(body, options)` and `parallel(...)` read their arguments once too.
 */
import { loop, parallel, Server, system, token, type Step } from '../../src/index.js';

const Seen = token<string[]>('Seen');

async function setup() {
  const server = new Server();
  await server.finish();
  const ctx = server.createContext();
  const seen: string[] = [];
  ctx.insert(Seen, seen);
  const step = (name: string) => system([], async () => {
    seen.push(name);
    await new Promise((r) => setImmediate(r));
  }, { name });
  return { server, ctx, seen, step };
}

describe('execute(steps) snapshots its steps before anything runs', () => {
  test('a step pushed after the call does not run', async () => {
    const { server, ctx, seen, step } = await setup();
    const steps: Step[] = [step('a')];
    const running = ctx.execute(steps);
    steps.push(step('pushed'));
    const result = await running;
    expect(seen).toEqual(['a']);
    expect(result.systemsExecuted).toBe(1);
    await server.dispose();
  });

  test('a step removed or replaced after the call still runs as it was given', async () => {
    const { server, ctx, seen, step } = await setup();
    const steps: Step[] = [step('a'), step('b')];
    const running = ctx.execute(steps);
    steps[1] = step('replaced');
    steps.length = 1;
    await running;
    expect(seen).toEqual(['a', 'b']);
    await server.dispose();
  });

  test('each element is read once: a getter that turns into a non-step later does not matter', async () => {
    const { server, ctx, seen, step } = await setup();
    const b = step('b');
    let reads = 0;
    const steps: Step[] = [step('a')];
    Object.defineProperty(steps, 1, {
      enumerable: true,
      get: () => (reads++ === 0 ? b : 'not a step'),
    });
    await expect(ctx.execute(steps)).resolves.toMatchObject({ systemsExecuted: 2 });
    expect(seen).toEqual(['a', 'b']);
    expect(reads).toBe(1);
    await server.dispose();
  });

  test('a non-step anywhere rejects before the first step runs', async () => {
    const { server, ctx, seen, step } = await setup();
    await expect(ctx.execute([step('a'), step('b'), 42 as never])).rejects.toThrow(/step #2/);
    expect(seen).toEqual([]);
    await server.dispose();
  });

  test('loop and parallel read their arrays and options once', async () => {
    const { server, ctx, seen, step } = await setup();
    const body: Step[] = [step('body')];
    let untilReads = 0;
    const options = {
      get until() {
        // answers a function when checked, then something else: read once, it never matters
        return untilReads++ === 0 ? () => seen.length >= 2 : 'not a function';
      },
      maxIterations: 5,
    };
    const l = loop(body, options as never);
    body.push(step('late'));
    const branch: Step[] = [step('branch')];
    const p = parallel(branch);
    branch.push(step('late-branch'));
    await ctx.execute([l, p]);
    expect(seen).toEqual(['body', 'body', 'branch']);
    expect(untilReads).toBe(1);
    await server.dispose();
  });
});
