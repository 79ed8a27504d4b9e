import 'reflect-metadata';
import fc from 'fast-check';
import { ParamError, Res, ResMut, Server, system, SystemError, token, type Param, type SystemContext } from '../../src/index.js';
import { AppConfig, gate, Scratchpad, setup, type Gate } from './helpers.js';

function conflictOf(err: unknown): ParamError {
  expect(err).toBeInstanceOf(SystemError);
  expect((err as SystemError).kind).toBe('ParamError');
  const cause = (err as SystemError).cause as ParamError;
  expect(cause).toBeInstanceOf(ParamError);
  expect(cause.kind).toBe('BorrowConflict');
  return cause;
}

/** A system that holds its params until `g` opens. */
function holding(params: readonly Param[], g: Gate, name = 'holder') {
  return system(params, async () => {
    await g.promise;
    return 'done';
  }, { name, output: token<string>(name) });
}

describe('write borrows (ResMut)', () => {
  test('a system holding ResMut<Scratchpad> across an await makes a concurrent Res<Scratchpad> run fail at once', async () => {
    const { server, ctx } = await setup();
    const g = gate();
    const writer = system([ResMut(Scratchpad)], async (s) => {
      s.notes.push('start');
      await g.promise;
      s.notes.push('end');
    }, { name: 'writer' });
    const reader = system([Res(Scratchpad)], (s) => s.notes.length, { name: 'reader' });
    const running = ctx.run(writer);
    let readerSettled = false;
    const readErr = ctx.run(reader).catch((e: unknown) => e).finally(() => (readerSettled = true));
    const err = await readErr;
    // it failed while the writer still holds the borrow: it never waited
    expect(readerSettled).toBe(true);
    const cause = conflictOf(err);
    expect(cause.token).toBe(Scratchpad);
    expect(cause.message).toMatch(/^borrow conflict: Scratchpad/);
    expect((err as SystemError).message).toMatch(/^parameter error: system "reader" → parameter #0 Res\(Scratchpad\): borrow conflict: Scratchpad/);
    // a second writer fails too
    conflictOf(await ctx.run(system([ResMut(Scratchpad)], () => 1)).catch((e: unknown) => e));
    // direct access obeys the same rule
    expect(() => ctx.get(Scratchpad)).toThrow(/^borrow conflict: Scratchpad/);
    expect(() => ctx.tryGet(Scratchpad)).toThrow(ParamError);
    expect(() => ctx.getMut(Scratchpad)).toThrow(/^borrow conflict: Scratchpad/);
    expect(() => ctx.insert(new Scratchpad())).toThrow(/borrow conflict/);
    expect(() => ctx.remove(Scratchpad)).toThrow(/borrow conflict/);
    g.open();
    await running;
    expect(ctx.get(Scratchpad).notes).toEqual(['start', 'end']);
    await expect(ctx.run(reader)).resolves.toBe(2);
    await server.dispose();
  });

  test('a child reading through Res sees the conflict on the nearest entry', async () => {
    const { server, ctx } = await setup();
    const g = gate();
    const running = ctx.run(holding([ResMut(Scratchpad)], g));
    const grandchild = ctx.child().child();
    conflictOf(await grandchild.run(system([Res(Scratchpad)], () => 1)).catch((e: unknown) => e));
    expect(() => grandchild.get(Scratchpad)).toThrow(/borrow conflict/);
    g.open();
    await running;
    expect(grandchild.get(Scratchpad)).toBe(ctx.get(Scratchpad));
    await server.dispose();
  });

  test('a local borrow conflict is reported, not skipped in favour of the ancestor value', async () => {
    const { server, ctx } = await setup();
    const child = ctx.child();
    child.insert(new Scratchpad());
    const g = gate();
    const running = child.run(holding([ResMut(Scratchpad)], g));
    // the parent's Scratchpad is free, but the nearest one (the child's) is borrowed
    conflictOf(await child.run(system([Res(Scratchpad)], () => 1)).catch((e: unknown) => e));
    conflictOf(await child.child().run(system([Res(Scratchpad, { optional: true })], () => 1)).catch((e: unknown) => e));
    expect(() => child.child().get(Scratchpad)).toThrow(/borrow conflict/);
    // the parent's own entry is unaffected
    await expect(ctx.run(system([ResMut(Scratchpad)], () => 'parent'))).resolves.toBe('parent');
    g.open();
    await running;
    await server.dispose();
  });
});

describe('read borrows (Res)', () => {
  test('many readers at once, but no writer while any reader runs', async () => {
    const { server, ctx } = await setup();
    const g1 = gate();
    const g2 = gate();
    const r1 = ctx.run(holding([Res(Scratchpad)], g1, 'r1'));
    const r2 = ctx.run(holding([Res(Scratchpad)], g2, 'r2'));
    await expect(ctx.run(system([Res(Scratchpad)], () => 'third reader'))).resolves.toBe('third reader');
    expect(ctx.get(Scratchpad)).toBeInstanceOf(Scratchpad); // get is allowed under read borrows
    conflictOf(await ctx.run(system([ResMut(Scratchpad)], () => 1)).catch((e: unknown) => e));
    expect(() => ctx.getMut(Scratchpad)).toThrow(/borrow conflict: Scratchpad \(2 running system\(s\) hold Res/);
    g1.open();
    await r1;
    expect(() => ctx.getMut(Scratchpad)).toThrow(/borrow conflict/);
    g2.open();
    await r2;
    expect(ctx.getMut(Scratchpad)).toBeInstanceOf(Scratchpad);
    await server.dispose();
  });

  test('reads of globals never conflict; globals resolved from server.container take no borrow', async () => {
    class Llm {
      calls = 0;
    }
    const server = new Server();
    server.insertGlobal(new AppConfig());
    server.container.bind(Llm).toSelf().inSingletonScope();
    await server.finish();
    const ctx = server.createContext();
    const g = gate();
    const a = ctx.run(holding([Res(AppConfig), Res(Llm)], g, 'a'));
    const b = ctx.child().run(holding([Res(AppConfig), Res(Llm)], g, 'b'));
    expect(ctx.get(AppConfig)).toBeInstanceOf(AppConfig);
    g.open();
    await expect(Promise.all([a, b])).resolves.toEqual(['done', 'done']);
    await server.dispose();
  });
});

describe('release', () => {
  const Other = token<string>('Other');

  async function assertFree(ctx: SystemContext): Promise<void> {
    expect(ctx.getMut(Scratchpad)).toBeInstanceOf(Scratchpad);
    expect(ctx.getMut(Other)).toBe('other');
  }

  test('on success, sync throw, async rejection, and a non-Error throw', async () => {
    const { server, ctx } = await setup();
    ctx.insert(Other, 'other');
    const bodies: (() => unknown)[] = [
      () => 1,
      async () => 1,
      () => {
        throw new Error('sync');
      },
      async () => {
        throw new Error('async');
      },
      () => {
        throw undefined;
      },
    ];
    for (const body of bodies) {
      await ctx.run(system([ResMut(Scratchpad), Res(Other)], body)).catch(() => undefined);
      await assertFree(ctx);
    }
    await server.dispose();
  });

  test('a failed fetch of a later parameter releases the borrows of the earlier ones', async () => {
    const { server, ctx } = await setup();
    ctx.insert(Other, 'other');
    const Missing = token<string>('Missing');
    await expect(ctx.run(system([ResMut(Scratchpad), Res(Other), Res(Missing)], () => 1))).rejects.toThrow(/resource not found: Missing/);
    await assertFree(ctx);
    // and when the later one is a conflict
    const g = gate();
    const holder = ctx.run(holding([ResMut(Other)], g));
    await expect(ctx.run(system([ResMut(Scratchpad), Res(Other)], () => 1))).rejects.toThrow(/borrow conflict: Other/);
    expect(ctx.getMut(Scratchpad)).toBeInstanceOf(Scratchpad);
    g.open();
    await holder;
    await assertFree(ctx);
    await server.dispose();
  });

  test('property: any interleaving of runs obeys many-readers-or-one-writer and leaves nothing borrowed', async () => {
    const A = token<{ n: number }>('A');
    const B = token<{ n: number }>('B');
    const tokens = [A, B] as const;
    type Op = { kind: 'start'; token: 0 | 1; write: boolean } | { kind: 'finish'; index: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('start' as const), token: fc.constantFrom(0 as const, 1 as const), write: fc.boolean() }),
      fc.record({ kind: fc.constant('finish' as const), index: fc.nat(20) }),
    );
    const server = new Server();
    await server.finish();
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        const ctx = server.createContext();
        ctx.insert(A, { n: 0 });
        ctx.insert(B, { n: 0 });
        const readers = [0, 0];
        const writers = [false, false];
        const live: { g: Gate; p: Promise<unknown>; token: 0 | 1; write: boolean }[] = [];
        for (const o of ops) {
          if (o.kind === 'start') {
            const g = gate();
            const t = tokens[o.token];
            const sys = system([o.write ? ResMut(t) : Res(t)], async () => {
              await g.promise;
            });
            const allowed = o.write ? readers[o.token] === 0 && !writers[o.token] : !writers[o.token];
            let failed = false;
            const p = ctx.run(sys).catch((e: unknown) => {
              failed = true;
              return e;
            });
            await Promise.resolve();
            await Promise.resolve();
            if (allowed) {
              expect(failed).toBe(false);
              if (o.write) writers[o.token] = true;
              else readers[o.token]++;
              live.push({ g, p, token: o.token, write: o.write });
            } else {
              conflictOf(await p);
            }
          } else if (live.length > 0) {
            const [run] = live.splice(o.index % live.length, 1);
            run.g.open();
            await run.p;
            if (run.write) writers[run.token] = false;
            else readers[run.token]--;
          }
          // direct access agrees with the model
          for (const i of [0, 1] as const) {
            if (writers[i]) expect(() => ctx.get(tokens[i])).toThrow(ParamError);
            else expect(ctx.get(tokens[i]).n).toBe(0);
            if (writers[i] || readers[i] > 0) expect(() => ctx.getMut(tokens[i])).toThrow(ParamError);
            else expect(ctx.getMut(tokens[i]).n).toBe(0);
          }
        }
        for (const run of live) run.g.open();
        await Promise.all(live.map((r) => r.p));
        expect(ctx.getMut(A).n).toBe(0);
        expect(ctx.getMut(B).n).toBe(0);
        await ctx.dispose();
      }),
      { numRuns: 60 },
    );
    await server.dispose();
  });
});
