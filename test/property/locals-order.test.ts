/**
 * Model-based property test of a context's own locals as a whole (the oldest one sits in
 * a field, the rest in a map): after any sequence of insert (new or replacing), remove
 * and getMut, the locals are what a `Map` model holds, and disposing the context disposes
 * the disposable values it still holds newest first (a replaced value counts as inserted
 * when it was replaced, a removed one is not disposed).
 */
import fc from 'fast-check';
import { Server, token, type Token } from '../../src/index.js';
import { probe } from '../../src/testing/probe.js';

const TOKENS: Token<object>[] = [token<object>('L0'), token<object>('L1'), token<object>('L2'), token<object>('L3')];

type Cmd = { op: 'insert'; tok: number } | { op: 'remove'; tok: number } | { op: 'getMut'; tok: number };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  fc.record({ op: fc.constant('insert' as const), tok: fc.nat(3) }),
  fc.record({ op: fc.constant('remove' as const), tok: fc.nat(3) }),
  fc.record({ op: fc.constant('getMut' as const), tok: fc.nat(3) }),
);

test('own locals follow a Map model, and are disposed newest first', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(cmd, { maxLength: 25 }), async (cmds) => {
      const server = new Server();
      await server.finish();
      const root = server.createContext();
      const ctx = root.child();
      const model = new Map<number, { name: string }>();
      const disposed: string[] = [];
      let n = 0;
      for (const c of cmds) {
        const t = TOKENS[c.tok] as Token<object>;
        if (c.op === 'insert') {
          const name = `v${n++}`;
          const value = { name, [Symbol.dispose]: () => void disposed.push(name) };
          const prev = ctx.insert(t, value);
          expect(prev).toBe(model.get(c.tok));
          model.delete(c.tok);
          model.set(c.tok, value);
        } else if (c.op === 'remove') {
          expect(ctx.remove(t)).toBe(model.get(c.tok));
          model.delete(c.tok);
        } else if (model.has(c.tok)) {
          expect(ctx.getMut(t)).toBe(model.get(c.tok));
        } else {
          expect(() => ctx.getMut(t)).toThrow(/ResourceNotFound|not found/i);
        }
        for (let i = 0; i < TOKENS.length; i++) expect(ctx.hasLocal(TOKENS[i] as Token<object>)).toBe(model.has(i));
        expect(probe.localCount(ctx)).toBe(model.size);
        expect(probe.localValues(ctx).map(([, v]) => (v as { name: string }).name)).toEqual([...model.values()].map((v) => v.name));
      }
      await ctx.dispose();
      expect(disposed).toEqual([...model.values()].map((v) => v.name).reverse());
      await server.dispose();
    }),
    { numRuns: 300 },
  );
});
