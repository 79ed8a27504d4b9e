import 'reflect-metadata';
import { injectable } from 'inversify';
import { Out, Res, ResMut, res, resMut, out, System, system, systemOf, token } from '../../src/index.js';
import { AppConfig, ConversationHistory, Scratchpad, setup, Summary } from './helpers.js';

const Count = token<number>('Count');

describe('defining systems', () => {
  test('the function form records name, params, output and access', () => {
    const summarize = system([Res(AppConfig), ResMut(Scratchpad), Out(Count), Res(ConversationHistory)], (c, s, n, h) => `${c.agentName} ${s.notes.length} ${n} ${h.messages.length}`, {
      name: 'summarize',
      output: Summary,
    });
    expect(summarize).toBeInstanceOf(System);
    expect(summarize.name).toBe('summarize');
    expect(summarize.output).toBe(Summary);
    expect(summarize.params.map((p) => p.token)).toEqual([AppConfig, Scratchpad, Count, ConversationHistory]);
    expect(summarize.access).toEqual({ reads: [AppConfig, ConversationHistory], writes: [Scratchpad], outputs: [Count] });
    expect(Object.isFrozen(summarize)).toBe(true);
    expect(Object.isFrozen(summarize.access.reads)).toBe(true);
  });

  test('the name defaults to the function name', () => {
    function tally() {
      return 1;
    }
    expect(system([], tally).name).toBe('tally');
    expect(system([], () => 1).name).toBe('<anonymous system>');
    expect(system([], tally).output).toBeUndefined();
  });

  test('Res(T) with ResMut(T), or ResMut(T) twice, throws at definition; Res(T) twice is fine', () => {
    expect(() => system([Res(Scratchpad), ResMut(Scratchpad)], () => 1)).toThrow(/both Res\(Scratchpad\) and ResMut\(Scratchpad\)/);
    expect(() => system([ResMut(Scratchpad), Res(Scratchpad)], () => 1)).toThrow(TypeError);
    expect(() => system([ResMut(Scratchpad), ResMut(Scratchpad)], () => 1)).toThrow(/ResMut\(Scratchpad\) is declared twice/);
    expect(() => system([Res(Scratchpad), Res(Scratchpad)], () => 1)).not.toThrow();
    expect(() => system([ResMut(Scratchpad), Out(Scratchpad)], () => 1)).not.toThrow();
  });

  test('the decorator form rejects the same conflicts', () => {
    expect(() => {
      class S {
        @system()
        static run(@res(Scratchpad) _a: Scratchpad, @resMut(Scratchpad) _b: Scratchpad) {}
      }
      return S;
    }).toThrow(/@system\(\) on S\.run .*both Res\(Scratchpad\) and ResMut\(Scratchpad\)/);
  });

  test('bad arguments are TypeErrors', () => {
    expect(() => system([Res(AppConfig)], 'fn' as never)).toThrow(/fn must be a function/);
    expect(() => system([AppConfig as never], () => 1)).toThrow(/parameter #0 is the function AppConfig.*Res\(T\)/);
    expect(() => system([], () => 1, { output: 'x' as never })).toThrow(TypeError);
    expect(() => system([], () => 1, { name: '' })).toThrow(/name must be a non-empty string/);
    expect(() => system([], () => 1, 3 as never)).toThrow(/options must be an object/);
  });

  test('@system() on a static method: systemOf returns the System, and the method is unchanged', () => {
    class TurnSystems {
      @system({ output: Summary })
      static summarize(@res(AppConfig) c: AppConfig, @out(Count) n: number) {
        return new Summary(`${c.agentName}:${n}`);
      }
      static plain() {}
    }
    const s = systemOf(TurnSystems.summarize);
    if (s === undefined) throw new Error('not a system');
    expect(s).toBeInstanceOf(System);
    expect(s.name).toBe('summarize');
    expect(s.output).toBe(Summary);
    expect(s.access).toEqual({ reads: [AppConfig], writes: [], outputs: [Count] });
    expect(TurnSystems.summarize(new AppConfig('x'), 2).text).toBe('x:2');
    expect(systemOf(TurnSystems.plain)).toBeUndefined();
    expect(systemOf(s)).toBe(s);
  });

  test('the decorator form declares the same System as the function form', () => {
    const fnForm = system([Res(AppConfig), ResMut(Scratchpad), Out(Count, { optional: true }), Res(ConversationHistory, { optional: true })], () => 1, {
      name: 'same',
      output: Summary,
    });
    class S {
      @system({ name: 'same', output: Summary })
      static run(
        @res() _c: AppConfig,
        @resMut() _s: Scratchpad,
        @out(Count, { optional: true }) _n: number | undefined,
        @res(ConversationHistory, { optional: true }) _h: ConversationHistory | undefined,
      ) {
        return 1;
      }
    }
    const decorated = systemOf(S.run);
    expect(decorated?.params).toEqual(fnForm.params);
    expect(decorated?.access).toEqual(fnForm.access);
    expect(decorated?.name).toBe(fnForm.name);
    expect(decorated?.output).toBe(fnForm.output);
  });

  test('@resMut(T) twice on one method throws at definition, like ResMut(T) twice', () => {
    expect(() => {
      class S {
        @system()
        static run(@resMut(Scratchpad) _a: Scratchpad, @resMut() _b: Scratchpad) {}
      }
      return S;
    }).toThrow(/@system\(\) on S\.run .*ResMut\(Scratchpad\) is declared twice/);
  });

  test('@system() with an undecorated parameter throws at definition', () => {
    expect(() => {
      class S {
        @system()
        static run(@res(AppConfig) _a: AppConfig, _b: Scratchpad) {}
      }
      return S;
    }).toThrow(/parameter #1 has no @res \/ @resMut \/ @out decorator/);
  });

  test('@system() keeps an explicit name', () => {
    class S {
      @system({ name: 'custom' })
      static run() {}
    }
    expect(systemOf(S.run)?.name).toBe('custom');
  });
});

describe('running a non-system', () => {
  test('ctx.run of an undecorated function rejects with a TypeError that says how to declare a system', async () => {
    const { server, ctx } = await setup();
    function notASystem() {
      return 1;
    }
    await expect(ctx.run(notASystem)).rejects.toThrow(TypeError);
    await expect(ctx.run(notASystem)).rejects.toThrow(/notASystem is not a system.*system\(\[Res\(A\), ResMut\(B\)\].*@system\(\)/);
    await expect(ctx.run({} as never)).rejects.toThrow(/expected a system/);
    await expect(ctx.run(42 as never)).rejects.toThrow(TypeError);
    expect(ctx.outputs.size).toBe(0);
    await server.dispose();
  });
});

describe('instance-method systems', () => {
  test('ctx.run(Class.prototype.method) resolves the receiver with ctx.resolve(Class)', async () => {
    const built: unknown[] = [];
    @injectable()
    class Notes {
      constructor(@res(AppConfig) readonly config: AppConfig) {
        built.push(this);
      }
      @system()
      note(@resMut(Scratchpad) s: Scratchpad) {
        s.notes.push(`by ${this.config.agentName}`);
        return s.notes.length;
      }
    }
    expect(systemOf(Notes.prototype.note)?.access).toEqual({ reads: [], writes: [Scratchpad], outputs: [] });
    const { server, ctx } = await setup();
    const n = await ctx.run(Notes.prototype.note);
    expect(n).toBe(1);
    expect(ctx.get(Scratchpad).notes).toEqual(['by claude']);
    expect(built).toHaveLength(1);
    expect(built[0]).toBeInstanceOf(Notes);
    expect(ctx.outputs.get(Number)).toBe(1);
    await server.dispose();
  });

  test('a receiver that can not be built rejects with a ParamError SystemError', async () => {
    class Missing {}
    @injectable()
    class Needs {
      constructor(@res(Missing) readonly m: Missing) {}
      @system()
      go() {
        return 1;
      }
    }
    void Missing;
    const { server, ctx } = await setup();
    // Missing is a class: an unknown class dependency is built, so this works
    await expect(ctx.run(Needs.prototype.go)).resolves.toBe(1);
    const T = token<string>('T');
    @injectable()
    class NeedsToken {
      constructor(@res(T) readonly t: string) {}
      @system()
      go() {
        return 1;
      }
    }
    const err = await ctx.run(NeedsToken.prototype.go).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'SystemError', kind: 'ParamError', systemName: 'go' });
    expect((err as Error).message).toMatch(/^parameter error: system "go" → could not build its receiver with ctx.resolve\(NeedsToken\): resource not found: T/);
    await server.dispose();
  });
});
