/**
 * Bug (issue 8 #6): two `ctx.execute()` calls running at the same time on one context
 * took each other's final output. Each one took "the most recent output of the context"
 * when it finished, so when both systems stored before either execution finished, the
 * first to finish took the other's output and the second found none. Fixed: each
 * execution returns the last output *it* stored, and moves only that one out of
 * `ctx.outputs`.
 */
import { parallel, Server, system, token } from '../../src/index.js';

const Left = token<string>('Left');
const Right = token<string>('Right');

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

async function setup() {
  const server = new Server();
  await server.finish();
  return { server, ctx: server.createContext() };
}

describe('concurrent executions on one context keep their own final output', () => {
  test('two executions whose systems both store before either finishes', async () => {
    const { server, ctx } = await setup();
    const g = gate();
    const left = system([], async () => {
      await g.promise;
      return 'left';
    }, { name: 'left', output: Left });
    const right = system([], async () => {
      await g.promise;
      return 'right';
    }, { name: 'right', output: Right });
    const a = ctx.execute([left]);
    const b = ctx.execute([right]);
    g.open();
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.hasOutput).toBe(true);
    expect(ra.outputToken).toBe(Left);
    expect(ra.value).toBe('left');
    expect(rb.hasOutput).toBe(true);
    expect(rb.outputToken).toBe(Right);
    expect(rb.value).toBe('right');
    // each moved its own output out; nothing of either is left behind
    expect(ctx.outputs.has(Left)).toBe(false);
    expect(ctx.outputs.has(Right)).toBe(false);
    await server.dispose();
  });

  test('many interleaved executions, with parallel merges and a shared token', async () => {
    const { server, ctx } = await setup();
    const Shared = token<number>('Shared');
    const gates = Array.from({ length: 6 }, gate);
    const runs = gates.map((g, i) => {
      const mine = system([], async () => {
        await g.promise;
        return i;
      }, { name: `s${i}`, output: i % 2 === 0 ? Shared : token<number>(`own${i}`) });
      return ctx.execute(i % 3 === 0 ? [parallel([mine])] : [mine]);
    });
    // open in reverse order so finishing order differs from starting order
    for (let i = gates.length - 1; i >= 0; i--) gates[i].open();
    const results = await Promise.all(runs);
    results.forEach((r, i) => {
      expect(r.hasOutput).toBe(true);
      expect(r.value).toBe(i);
    });
    await server.dispose();
  });

  test('a store under the same token by a concurrent ctx.run is not taken away', async () => {
    const { server, ctx } = await setup();
    const g = gate();
    const mine = system([], async () => {
      await g.promise;
      return 'mine';
    }, { name: 'mine', output: Left });
    const theirs = system([], async () => {
      await g.promise;
      return 'theirs';
    }, { name: 'theirs', output: Left });
    const running = ctx.execute([mine]);
    const other = ctx.run(theirs);
    g.open();
    const [result] = await Promise.all([running, other]);
    expect(result.outputToken).toBe(Left);
    expect(result.value).toBe('mine');
    // the concurrent run's output under the same token stays where it stored it
    expect(ctx.outputs.get(Left)).toBe('theirs');
    await server.dispose();
  });
});
