/**
 * Bug: ctx.execute(steps) took the context's most recent output as its final output even
 * when no system of this execution stored anything. After `ctx.run(setup)`,
 * `ctx.execute([])` (or a loop whose `until` is true at once) reported setup's output as
 * its own (`hasOutput` true) and moved it out of `ctx.outputs`, so a later `Out` of it
 * failed. Fixed: only an execution in which a system ran takes a final output.
 */
import { Out, Server, loop, system, token } from '../../src/index.js';

const Plan = token<string>('Plan');
const Draft = token<string>('Draft');

async function setup() {
  const server = new Server();
  await server.finish();
  const ctx = server.createContext();
  await ctx.run(system([], () => 'outline', { name: 'plan', output: Plan }));
  return { server, ctx };
}

describe('ctx.execute does not take an output stored before it started', () => {
  test('an empty step list has no output and leaves the earlier output in place', async () => {
    const { server, ctx } = await setup();
    const result = await ctx.execute([]);
    expect(result.hasOutput).toBe(false);
    expect(result.outputToken).toBeUndefined();
    expect(result.output(Plan)).toBeUndefined();
    expect(ctx.outputs.get(Plan)).toBe('outline');
    await server.dispose();
  });

  test('a loop whose body never runs has no output; an Out of the earlier output still works', async () => {
    const { server, ctx } = await setup();
    const draft = system([Out(Plan)], (plan) => `draft of ${plan}`, { name: 'draft', output: Draft });
    const none = await ctx.execute([loop([draft], { until: () => true })]);
    expect(none.hasOutput).toBe(false);
    expect(ctx.outputs.has(Plan)).toBe(true);
    const some = await ctx.execute([draft]);
    expect(some.output(Draft)).toBe('draft of outline');
    // the earlier output stays: execute never clears outputs, it only takes its own final one
    expect(ctx.outputs.get(Plan)).toBe('outline');
    await server.dispose();
  });
});
