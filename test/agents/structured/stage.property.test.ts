/**
 * A fast-check model of stage / commit / deny over interleaved executions: groups of
 * calls run at once (capture calls with valid or invalid arguments, blocked or not by a
 * post-execute listener, with reused call ids, and calls of another tool), each settling
 * after a random delay. The model: the value is the arguments of the first capture
 * execution whose final result succeeded (in `tools/result` order), the task is stopped
 * exactly then, and every call started after that is refused without running.
 */
import fc from 'fast-check';
import { Agents, Events, Tools, type ToolExecution, type ToolResult } from '../../../src/index.js';
import { assertNoLeaks } from '../../../src/testing/index.js';
import { structuredServer, tick } from './helpers.js';

interface Op {
  readonly tool: 'capture' | 'other';
  readonly valid: boolean;
  readonly block: boolean;
  readonly callId: string;
  readonly delay: number;
}
const op: fc.Arbitrary<Op> = fc.record({
  tool: fc.constantFrom('capture' as const, 'capture' as const, 'other' as const),
  valid: fc.boolean(),
  block: fc.boolean(),
  callId: fc.constantFrom('c1', 'c2', 'c3'),
  delay: fc.integer({ min: 0, max: 3 }),
});

test('stage, commit and deny follow the model over interleaved executions, results and blocks', async () => {
  const server = await structuredServer();
  const app = server.createContext();
  const ops = new Map<number, Op>();
  const ran = new Set<number>();
  app.get(Tools).register({ name: 'other', description: 'Other', parameters: { type: 'object', properties: { tag: { type: 'integer' } }, required: ['tag'] }, execute: (args: { tag: number }) => void ran.add(args.tag) });
  app.get(Events).on('tools/post-execute', async (d, e: ToolExecution) => {
    const o = ops.get((e.arguments as { tag: number }).tag) as Op;
    for (let i = 0; i < o.delay; i++) await tick();
    return o.block ? { kind: 'block', reason: 'blocked' } : d;
  });
  const finals: { tag: number; name: string; ok: boolean }[] = [];
  app.get(Events).on('tools/result', (e: ToolExecution, r: ToolResult) => {
    const tag = (e.arguments as { tag?: unknown } | undefined)?.tag;
    if (typeof tag === 'number') finals.push({ tag, name: e.name, ok: !r.isError });
  });
  const agents = app.get(Agents);
  const schema = { type: 'object', properties: { tag: { type: 'integer' }, answer: { type: 'string' } }, required: ['tag', 'answer'], additionalProperties: false };

  await fc.assert(
    fc.asyncProperty(fc.array(fc.array(op, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 }), async (groups) => {
      ops.clear();
      finals.length = 0;
      ran.clear();
      let tag = 0;
      const results: { tag: number; group: number; op: Op; result: ToolResult }[] = [];
      let stoppedAfterGroup = -1;
      const run = agents.runTask({
        output: schema,
        fn: async (agent, task) => {
          const tools = agent.ctx.get(Tools);
          for (let g = 0; g < groups.length; g++) {
            const started = (groups[g] as Op[]).map((o) => {
              const t = ++tag;
              ops.set(t, o);
              const args = o.tool === 'capture' ? (o.valid ? { tag: t, answer: `a${t}` } : { tag: t, answer: t }) : o.valid ? { tag: t } : { tag: 'x' };
              return tools.execute({ callId: o.callId, name: o.tool === 'capture' ? 'structured_output' : 'other', arguments: args }).then((result) => results.push({ tag: t, group: g, op: o, result }));
            });
            await Promise.all(started);
            if (task.stopped && stoppedAfterGroup < 0) stoppedAfterGroup = g;
          }
          return task;
        },
      });
      const out = await run.then(
        (r) => ({ ok: true as const, value: r.value, task: r.result }),
        (e: unknown) => ({ ok: false as const, error: e }),
      );
      // the first successful final result of a capture is the value, and only then is the task stopped
      const first = finals.find((f) => f.name === 'structured_output' && f.ok);
      if (first === undefined) {
        expect(out).toMatchObject({ ok: false, error: { code: 'NO_STRUCTURED_RESULT' } });
        return;
      }
      expect(out.ok).toBe(true);
      if (!out.ok) return;
      expect(out.value).toEqual({ tag: first.tag, answer: `a${first.tag}` });
      expect(Object.isFrozen(out.value)).toBe(true);
      expect(out.task.stopped).toBe(true);
      // a blocked or invalid capture never committed
      const firstOp = ops.get(first.tag) as Op;
      expect(firstOp.block || !firstOp.valid).toBe(false);
      // every call of a later group was refused without running
      const later = results.filter((r) => r.group > stoppedAfterGroup);
      for (const r of later) expect(r.result.error?.code).toBe(r.op.valid ? 'DENIED' : 'INVALID_ARGS');
      for (const r of later) expect(ran.has(r.tag)).toBe(false);
    }),
    { numRuns: 150 },
  );
  await server.dispose();
  assertNoLeaks(server);
});
