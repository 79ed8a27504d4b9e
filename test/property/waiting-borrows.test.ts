/**
 * Property test of SPEC 10.5 waiting borrows: random readers and writers (waiting
 * systems, fail-fast systems, withMut / withRes), on one or two entries, with random
 * start delays, hold times and timeouts. Whatever the interleaving:
 * - a writer never overlaps anyone on its entry (many readers or one writer);
 * - every waiter is either granted (its body runs) or times out with BorrowConflict
 *   (and only after its timeout), and a fail-fast run either runs or fails at once;
 * - when everything settled, nothing is borrowed or queued.
 */
import fc from 'fast-check';
import { ParamError, Res, ResMut, Server, system, SystemError, token, type Param, type SystemContext } from '../../src/index.js';
import { probe } from '../../src/testing/probe.js';

const A = token<{ id: string }>('A');
const B = token<{ id: string }>('B');
const TOKENS = [A, B] as const;

type Kind = 'wait' | 'fail' | 'with';
interface Actor {
  kind: Kind;
  /** per token: undefined (not used), false (read), true (write) */
  uses: [boolean | undefined, boolean | undefined];
  startMs: number;
  holdMs: number;
  timeoutMs: number;
  onChild: boolean;
}

const actor: fc.Arbitrary<Actor> = fc
  .record({
    kind: fc.constantFrom<Kind>('wait', 'wait', 'fail', 'with'),
    uses: fc.tuple(fc.option(fc.boolean(), { nil: undefined }), fc.option(fc.boolean(), { nil: undefined })),
    startMs: fc.integer({ min: 0, max: 6 }),
    holdMs: fc.integer({ min: 0, max: 6 }),
    timeoutMs: fc.integer({ min: 1, max: 40 }),
    onChild: fc.boolean(),
  })
  .map((a) => {
    // at least one token; withMut/withRes take exactly one
    const uses: [boolean | undefined, boolean | undefined] = a.uses[0] === undefined && a.uses[1] === undefined ? [true, undefined] : a.uses;
    if (a.kind === 'with' && uses[0] !== undefined && uses[1] !== undefined) uses[1] = undefined;
    // ResMut only on the root context's own locals: actors on the child only read
    if (a.onChild) for (let i = 0; i < 2; i++) if (uses[i] === true) uses[i] = false;
    return { ...a, uses };
  });

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

test('random readers and writers never overlap a writer with anyone; every waiter is granted or times out', async () => {
  const server = new Server({ borrows: 'fail' });
  await server.finish();
  await fc.assert(
    fc.asyncProperty(fc.array(actor, { minLength: 1, maxLength: 8 }), async (actors) => {
      const root = server.createContext();
      root.insert(A, { id: 'a' });
      root.insert(B, { id: 'b' });
      const child = root.child();
      const readers = [0, 0];
      const writers = [0, 0];
      const violations: string[] = [];

      const enter = (uses: Actor['uses'], who: number) => {
        uses.forEach((w, i) => {
          if (w === undefined) return;
          if (w ? writers[i] > 0 || readers[i] > 0 : writers[i] > 0) violations.push(`actor ${who} entered ${i} (${w ? 'write' : 'read'}) with r=${readers[i]} w=${writers[i]}`);
          if (w) writers[i]++;
          else readers[i]++;
        });
      };
      const leave = (uses: Actor['uses']) => {
        uses.forEach((w, i) => {
          if (w === undefined) return;
          if (w) writers[i]--;
          else readers[i]--;
        });
      };

      const outcomes = actors.map(async (a, who) => {
        await sleep(a.startMs);
        const ctx: SystemContext = a.onChild ? child : root;
        const body = async () => {
          enter(a.uses, who);
          await sleep(a.holdMs);
          leave(a.uses);
          return who;
        };
        const started = performance.now();
        let p: Promise<unknown>;
        if (a.kind === 'with') {
          const i = a.uses[0] !== undefined ? 0 : 1;
          p = a.uses[i] ? ctx.withMut(TOKENS[i], body, { timeoutMs: a.timeoutMs }) : ctx.withRes(TOKENS[i], body, { timeoutMs: a.timeoutMs });
        } else {
          const params: Param[] = [];
          a.uses.forEach((w, i) => {
            if (w !== undefined) params.push(w ? ResMut(TOKENS[i]) : Res(TOKENS[i]));
          });
          p = ctx.run(system(params, body, { name: `actor${who}`, output: token<number>(`out${who}`), borrows: a.kind === 'fail' ? 'fail' : 'wait', borrowTimeoutMs: a.timeoutMs }));
        }
        try {
          expect(await p).toBe(who);
          return 'granted';
        } catch (err) {
          const cause = err instanceof SystemError ? err.cause : err;
          if (!(cause instanceof ParamError) || cause.kind !== 'BorrowConflict') throw err;
          const waited = performance.now() - started;
          if (a.kind === 'fail') return 'conflict';
          // a waiter fails only once its timeout passed (timers may fire a little early by rounding)
          if (waited < a.timeoutMs - 2) violations.push(`actor ${who} timed out after ${waited} ms < ${a.timeoutMs} ms`);
          return 'timeout';
        }
      });
      const results = await Promise.all(outcomes);
      expect(violations).toEqual([]);
      expect(results).toHaveLength(actors.length);
      // nothing borrowed, nothing queued
      for (const t of TOKENS) {
        const e = probe.localEntry(root, t);
        expect(e?.reads).toBe(0);
        expect(e?.writing).toBe(false);
        expect(e?.queue).toBeUndefined();
        expect(root.getMut(t)).toBeDefined();
      }
      await root.dispose();
    }),
    { numRuns: 60 },
  );
  await server.dispose();
});
