/**
 * Checkpoints and rollback (SPEC §12.2): pinning, retention, rollback records, the
 * statuses `events()` reports, and a fast-check model of turns, failures, checkpoints,
 * rollbacks and resumes against the memory store.
 */
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemorySessionStore, Sessions, TurnLog, type DurableSession, type SessionStore } from '../../src/index.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { Memory, recordEvents, serverOn, type Harness } from './harness.js';

const collect = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

const say = (s: DurableSession, content: string, count?: number): Promise<void> =>
  s.turn((turnCtx, session) => {
    session.history.append({ role: 'user', content });
    if (count !== undefined) turnCtx.get(Memory).count = count;
  });

describe('checkpoint and rollback', () => {
  test('rollback goes back to a pinned checkpoint; later turns stay in the log as superseded; numbering resumes; a resume agrees', async () => {
    const store = new MemorySessionStore();
    const a = await serverOn(store);
    const heard = recordEvents(a.ctx);
    const s = await a.ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    await say(s, 'one', 1);
    await expect(s.checkpoint('one')).resolves.toBe(1);
    await say(s, 'two', 2);
    await say(s, 'three', 3);
    await s.rollback(1);
    expect(s.committedTurn).toBe(1);
    expect(s.session.history.messages.map((m) => m.content)).toEqual(['one']);
    expect(s.agent.ctx.get(Memory).count).toBe(1);
    expect(heard.filter((e) => e.name === 'session/rolled-back').map((e) => e.payload)).toEqual([{ sessionId: 's', agentId: 'a', turn: 1 }]);
    expect((await s.checkpoints()).map((c) => [c.turn, c.label, c.pinned])).toEqual([
      [0, undefined, false],
      [1, 'one', true],
    ]);
    await say(s, 'two again', 5);
    expect(s.committedTurn).toBe(2);
    const events = await collect(a.ctx.get(Sessions).events('s'));
    expect(events.map((e) => [e.turn, e.status])).toEqual([
      [1, 'committed'],
      [2, 'superseded'],
      [3, 'superseded'],
      [2, 'committed'],
    ]);
    await s.close();
    const again = await a.ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' });
    expect(again.session.history.messages.map((m) => m.content)).toEqual(['one', 'two again']);
    expect(again.agent.ctx.get(Memory).count).toBe(5);
    await a.server.dispose();
  });

  test('rollback is SESSION_BUSY while a turn runs and CHECKPOINT_NOT_FOUND for a turn without a kept checkpoint', async () => {
    const { server, ctx } = await serverOn(new MemorySessionStore(), { keepCheckpoints: 2 });
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    for (let i = 1; i <= 5; i++) await say(s, `m${i}`, i);
    expect((await s.checkpoints()).map((c) => c.turn)).toEqual([0, 4, 5]);
    await expect(s.rollback(2)).rejects.toMatchObject({ code: 'CHECKPOINT_NOT_FOUND', sessionId: 's' });
    await expect(s.rollback(9)).rejects.toMatchObject({ code: 'CHECKPOINT_NOT_FOUND' });
    let release: (() => void) | undefined;
    const turn = s.turn(() => new Promise<void>((r) => (release = r)));
    await expect(s.rollback(4)).rejects.toMatchObject({ code: 'SESSION_BUSY' });
    while (release === undefined) await new Promise((r) => setImmediate(r));
    release();
    await turn;
    await s.rollback(0);
    expect(s.session.history.length).toBe(0);
    expect(s.agent.ctx.get(Memory).count).toBe(0);
    await server.dispose();
  });

  test('events() shows a flushed event as pending while its turn runs, then committed', async () => {
    const { server, ctx } = await serverOn(new MemorySessionStore());
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    let seen: string[] = [];
    await s.turn(async (turnCtx) => {
      turnCtx.get(TurnLog).record('step', 1);
      await turnCtx.get(TurnLog).flush();
      seen = (await collect(ctx.get(Sessions).events('s'))).map((e) => `${e.kind}:${e.status}`);
      turnCtx.get(TurnLog).record('step', 2);
    });
    expect(seen).toEqual(['step:pending']);
    expect((await collect(ctx.get(Sessions).events('s'))).map((e) => `${e.kind}:${e.body}:${e.status}`)).toEqual(['step:1:committed', 'step:2:committed']);
    expect((await collect(ctx.get(Sessions).events('s', { afterSeq: 1 }))).map((e) => e.seq)).toEqual([2]);
    await server.dispose();
  });
});

// ---------------------------------------------------------------------- the model

/** A history change inside a turn: an append, or a replace (compaction) of a range picked from `a`, `b`. */
type Edit = { readonly kind: 'append' } | { readonly kind: 'replace'; readonly a: number; readonly b: number; readonly k: number };

type Command =
  | { readonly kind: 'turn'; readonly count: number; readonly edits: readonly Edit[] }
  | { readonly kind: 'fail'; readonly count: number; readonly edits: readonly Edit[] }
  | { readonly kind: 'pin'; readonly label: string | undefined }
  | { readonly kind: 'rollback'; readonly back: number }
  | { readonly kind: 'reopen' };

interface Snapshot {
  readonly messages: readonly string[];
  readonly count: number;
}

const edit: fc.Arbitrary<Edit> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'append' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('replace' as const), a: fc.nat(6), b: fc.nat(6), k: fc.nat(2) }) },
);
const edits = fc.array(edit, { maxLength: 3 });

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('turn' as const), count: fc.nat(99), edits }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fail' as const), count: fc.nat(99), edits }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('pin' as const), label: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('rollback' as const), back: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reopen' as const }) },
);

const modelDir = mkdtempSync(join(tmpdir(), 'polestar-sessions-model-'));
afterAll(() => rmSync(modelDir, { recursive: true, force: true }));
let modelFiles = 0;

test.each([
  ['the memory store', 60, (): SessionStore => new MemorySessionStore()],
  ['a SQLite file', 15, (): SessionStore => new SqliteSessionStore({ path: join(modelDir, `model-${modelFiles++}.db`) })],
] as const)('model on %s: turns (appending, compacting), failing turns, checkpoints, rollbacks and resumes keep history, locals, turn and checkpoints as the model says; every history snapshot read stays unchanged', async (_name, numRuns, makeStore) => {
  const KEEP = 2;
  await fc.assert(
    fc.asyncProperty(fc.array(command, { maxLength: 14 }), async (commands) => {
      const store = makeStore();
      let h: Harness = await serverOn(store, { keepCheckpoints: KEEP });
      const servers = [h];
      let s = await h.ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
      // The model: the state of each committed turn, and the kept checkpoints.
      let states: Snapshot[] = [{ messages: [], count: 0 }];
      const kept = new Map<number, { pinned: boolean; label: string | undefined }>([[0, { pinned: false, label: undefined }]]);
      let n = 0;
      // Every messages array read so far, with the contents it had: a snapshot never changes.
      const reads: { arr: readonly { content: string }[]; want: readonly string[] }[] = [];
      try {
        for (const c of commands) {
          const cur = states[states.length - 1];
          if (c.kind === 'turn' || c.kind === 'fail') {
            const content = `t${n}-${c.count}`;
            // The turn's edits applied to a plain array: what the history must hold after it.
            const after = [...cur.messages, content];
            c.edits.forEach((e, i) => {
              if (e.kind === 'append') after.push(`${content}-${i}`);
              else {
                const start = Math.min(e.a, e.b, after.length);
                const end = Math.min(Math.max(e.a, e.b), after.length);
                after.splice(start, end - start, ...Array.from({ length: e.k }, (_, j) => `${content}-${i}s${j}`));
              }
            });
            const p = s.turn((turnCtx, session) => {
              session.history.append({ role: 'user', content });
              c.edits.forEach((e, i) => {
                const h = session.history;
                reads.push({ arr: h.messages, want: h.messages.map((m) => m.content) });
                if (e.kind === 'append') h.append({ role: 'user', content: `${content}-${i}` });
                else {
                  const start = Math.min(e.a, e.b, h.length);
                  const end = Math.min(Math.max(e.a, e.b), h.length);
                  h.replace(start, end, Array.from({ length: e.k }, (_, j) => ({ role: 'user' as const, content: `${content}-${i}s${j}` })));
                }
              });
              expect(session.history.messages.map((m) => m.content)).toEqual(after);
              turnCtx.get(Memory).count = c.count;
              if (c.kind === 'fail') throw new Error('fail');
            });
            if (c.kind === 'fail') {
              await expect(p).rejects.toThrow('fail');
            } else {
              await p;
              states = [...states, { messages: after, count: c.count }];
              const t = states.length - 1;
              kept.set(t, { pinned: false, label: undefined });
              for (const [k, v] of kept) if (k > 0 && k < t && k <= t - KEEP && !v.pinned) kept.delete(k);
            }
            n++;
          } else if (c.kind === 'pin') {
            const t = states.length - 1;
            await expect(s.checkpoint(c.label)).resolves.toBe(t);
            const prev = kept.get(t) as { label: string | undefined };
            kept.set(t, { pinned: true, label: c.label ?? prev.label });
          } else if (c.kind === 'rollback') {
            const target = Math.max(0, states.length - 1 - c.back);
            if (kept.has(target)) {
              await s.rollback(target);
              states = states.slice(0, target + 1);
              for (const k of [...kept.keys()]) if (k > target) kept.delete(k);
            } else {
              await expect(s.rollback(target)).rejects.toMatchObject({ code: 'CHECKPOINT_NOT_FOUND' });
            }
          } else {
            await s.close();
            h = await serverOn(store, { keepCheckpoints: KEEP });
            servers.push(h);
            s = await h.ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' });
          }
          const want = states[states.length - 1];
          expect(s.committedTurn).toBe(states.length - 1);
          expect(s.session.history.messages.map((m) => m.content)).toEqual(want.messages);
          expect(s.session.history.length).toBe(want.messages.length);
          reads.push({ arr: s.session.history.messages, want: want.messages });
          for (const r of reads) {
            expect(Object.isFrozen(r.arr)).toBe(true);
            expect(r.arr.map((m) => m.content)).toEqual(r.want);
          }
          expect(s.agent.ctx.get(Memory).count).toBe(want.count);
          expect((await s.checkpoints()).map((cp) => [cp.turn, cp.pinned, cp.label])).toEqual(
            [...kept.entries()].sort((x, y) => x[0] - y[0]).map(([k, v]) => [k, v.pinned, v.label]),
          );
        }
      } finally {
        for (const x of servers) await x.server.dispose();
        await store.close();
      }
    }),
    { numRuns },
  );
});
