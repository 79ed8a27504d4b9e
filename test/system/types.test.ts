/**
 * Type-level tests: compiled by `npm run typecheck` (tsconfig.json includes test/).
 * Each `@ts-expect-error` fails the typecheck if the line stops being an error.
 */
import 'reflect-metadata';
import { Out, Res, res, ResMut, system, token, type System } from '../../src/index.js';
import { AppConfig, Scratchpad, setup, Summary } from './helpers.js';

const Count = token<number>('Count');

test('parameter types are inferred from descriptors, and ctx.run infers the output type', async () => {
  const { server, ctx } = await setup();

  // no annotations needed: c is Readonly<AppConfig>
  const name = system([Res(AppConfig)], (c) => c.agentName);
  const n: string = await ctx.run(name);
  expect(n).toBe('claude');

  // @ts-expect-error the output of `name` is a string, not a number
  const wrong: number = await ctx.run(name);
  void wrong;

  system([Res(AppConfig)], (c) => {
    // @ts-expect-error Res<T> is read-only
    c.agentName = 'x';
    // @ts-expect-error no such property
    return c.nope;
  });

  // ResMut<T> is mutable
  const write = system([ResMut(Scratchpad), Out(Count)], (s, count) => {
    s.notes.push(String(count + 1));
    s.notes = [];
    return new Summary('ok');
  });
  const typed: System<Summary> = write;
  void typed;

  // optional parameters include undefined
  system([Res(AppConfig, { optional: true }), Out(Count, { optional: true })], (c, k) => {
    // @ts-expect-error c may be undefined
    void c.agentName;
    // @ts-expect-error k may be undefined
    void (k + 1);
    return c?.agentName ?? String(k ?? 0);
  });

  // async bodies resolve to the awaited type
  const asyncSys = system([Res(AppConfig)], async (c) => c.agentName.length);
  const len: number = await ctx.run(asyncSys);
  expect(len).toBe(6);

  // @ts-expect-error a token of the wrong value type is refused by the parameter's annotation
  system([Res(Count)], (c: string) => c);

  // @ts-expect-error too many parameters for the declared descriptors
  system([Res(AppConfig)], (_c, _extra: number) => 1);

  // decorated methods: the return type flows through ctx.run too
  class S {
    @system()
    static async count(@res(AppConfig) c: AppConfig): Promise<number> {
      return c.agentName.length;
    }
  }
  const x: number = await ctx.run(S.count);
  expect(x).toBe(6);
  // @ts-expect-error the decorated method resolves to a number
  const y: string = await ctx.run(S.count);
  void y;
  await server.dispose();
});
