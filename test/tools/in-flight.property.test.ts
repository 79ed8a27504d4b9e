/**
 * A fast-check model of tool calls in flight (SPEC 10.2): random interleavings of calls
 * through two turns of an agent, bodies finishing, callers aborting, registrations being
 * undone and contexts being disposed. After every step:
 *
 * - a call settles exactly once and never rejects; `tools/result` sees it exactly once;
 * - a call is a success only if its body returned before any abort reached it; a call
 *   aborted before its body returned is EXECUTION_ERROR `tool "x" was aborted: ...`;
 * - a fulfilled `dispose()` of a context means no body of a call made through it (or a
 *   descendant), and no body of a tool it owned, is still running.
 */
import fc from 'fast-check';
import { Events, Server, Tools, ToolsPlugin, createScope, type SystemContext, type ToolExecution, type ToolResult } from '../../src/index.js';

type Op =
  | { op: 'call'; turn: number; tool: number; signal: boolean }
  | { op: 'finish'; call: number }
  | { op: 'abortCaller'; call: number }
  | { op: 'unregister'; tool: number }
  | { op: 'disposeTurn'; turn: number }
  | { op: 'disposeOwner' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('call' as const), turn: fc.nat(1), tool: fc.nat(1), signal: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('finish' as const), call: fc.nat(7) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('abortCaller' as const), call: fc.nat(7) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('unregister' as const), tool: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('disposeTurn' as const), turn: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('disposeOwner' as const) }) },
);

interface Call {
  readonly turn: number;
  readonly tool: number;
  readonly ac: AbortController | undefined;
  /** The body started and has not settled. */
  running: boolean;
  started: boolean;
  /** An abort reached the call before its body returned. */
  abortedEarly: boolean;
  returned: boolean;
  finish?: () => void;
  results: ToolResult[];
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

test('property: calls in flight settle once, aborts decide them, a fulfilled dispose is quiescent', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
      const server = new Server({ disposeTimeoutMs: 2_000 });
      server.addPlugins(new ToolsPlugin());
      await server.finish();
      const app = server.createContext();
      const agent = createScope(app, { id: 'agent' });
      // tool 0 is owned by `owner` (a global registration made through a child of app);
      // tool 1 is the agent's own
      const owner = app.child();
      const turns: SystemContext[] = [agent.ctx.child(), agent.ctx.child()];
      // views kept across the turns' disposal: a disposed turn's view runs nothing
      const views = turns.map((t) => t.get(Tools));
      const calls: Call[] = [];
      const observed = new Map<ToolExecution, number>();
      app.get(Events).on('tools/result', (e: ToolExecution) => void observed.set(e, (observed.get(e) ?? 0) + 1), { global: true });
      const body = (_a: unknown, e: ToolExecution): Promise<string> => {
        const c = calls[Number(e.callId)];
        c.started = true;
        c.running = true;
        return new Promise<string>((resolve, reject) => {
          c.finish = () => resolve('done');
          // honours its signal, a little later
          e.signal.addEventListener('abort', () => setTimeout(() => reject(new Error('stopped')), 1));
        }).finally(() => {
          c.running = false;
          c.returned = true;
        });
      };
      const offs = [
        owner.get(Tools).register({ name: 't0', description: 't0', parameters: { type: 'object' }, execute: body }),
        agent.ctx.get(Tools).register({ name: 't1', description: 't1', parameters: { type: 'object' }, execute: body }),
      ];
      const registered = [true, true];
      const disposedTurns = [false, false];
      let ownerDisposed = false;
      const markAborted = (pred: (c: Call) => boolean): void => {
        for (const c of calls) if (pred(c) && !c.returned && c.results.length === 0) c.abortedEarly = true;
      };

      for (const op of ops) {
        switch (op.op) {
          case 'call': {
            const ac = op.signal ? new AbortController() : undefined;
            const c: Call = { turn: op.turn, tool: op.tool, ac, running: false, started: false, abortedEarly: false, returned: false, results: [] };
            const callId = String(calls.length);
            calls.push(c);
            const p = views[op.turn].execute({ callId, name: `t${op.tool}`, arguments: {}, signal: ac?.signal });
            p.then(
              (r) => void c.results.push(r),
              () => {
                throw new Error('execute rejected');
              },
            );
            break;
          }
          case 'finish': {
            const c = calls[op.call];
            if (c?.running && c.finish !== undefined) c.finish();
            break;
          }
          case 'abortCaller': {
            const c = calls[op.call];
            if (c?.ac !== undefined && !c.ac.signal.aborted) {
              markAborted((x) => x === c);
              c.ac.abort(new Error('caller'));
            }
            break;
          }
          case 'unregister': {
            if (registered[op.tool]) {
              registered[op.tool] = false;
              markAborted((x) => x.tool === op.tool && x.started);
              offs[op.tool]();
            }
            break;
          }
          case 'disposeTurn': {
            if (!disposedTurns[op.turn]) {
              disposedTurns[op.turn] = true;
              markAborted((x) => x.turn === op.turn);
              await turns[op.turn].dispose();
              for (const c of calls) if (c.turn === op.turn) expect(c.running).toBe(false);
            }
            break;
          }
          case 'disposeOwner': {
            if (!ownerDisposed) {
              ownerDisposed = true;
              if (registered[0]) markAborted((x) => x.tool === 0 && x.started);
              registered[0] = false;
              await owner.dispose();
              for (const c of calls) if (c.tool === 0) expect(c.running).toBe(false);
            }
            break;
          }
        }
        await tick();
      }
      // let everything finish
      for (const c of calls) c.finish?.();
      await agent.dispose();
      await owner.dispose();
      await tick();
      for (const c of calls) {
        expect(c.results).toHaveLength(1);
        expect(c.running).toBe(false);
        const r = c.results[0];
        if (!r.isError) {
          expect(c.abortedEarly).toBe(false);
          expect(c.returned).toBe(true);
          expect(r.content).toBe('done');
        } else if (c.abortedEarly && c.started) {
          // aborted before its body returned: never a success
          expect(r.error?.code).toBe('EXECUTION_ERROR');
        }
        if (r.error?.code === 'EXECUTION_ERROR') expect(r.error.message).toMatch(/^tool "t\d" was aborted: /);
      }
      for (const [e, n] of observed) {
        expect(n).toBe(1);
        void e;
      }
      expect(observed.size).toBe(calls.length);
      await server.dispose();
    }),
    { numRuns: 60 },
  );
});
