/**
 * Type-level tests of `toolSystem` (SPEC 10.1), compiled by `npm run typecheck`. Every
 * `@ts-expect-error` fails the typecheck if the line stops being an error. The file also
 * runs as an ordinary jest test.
 */
import { z } from 'zod';
import { Res, ResMut, Out, token, toolSystem, type SystemContext, type ToolExecution, type ToolSystem } from '../../src/index.js';

class History {
  messages: string[] = [];
}
class Scratchpad {
  notes: string[] = [];
}
const Plan = token<string>('Plan');

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(): T | undefined {
  return undefined;
}

test('parameter values are inferred from the descriptors; args is unknown unless declared', () => {
  const body = toolSystem([Res(History), ResMut(Scratchpad), Out(Plan)], (history, scratch, _plan, _args, _execution) => {
    assertType<Equal<typeof history, Readonly<History>>>();
    assertType<Equal<typeof scratch, Scratchpad>>();
    assertType<Equal<typeof _plan, string>>();
    assertType<Equal<typeof _args, unknown>>();
    assertType<Equal<typeof _execution, ToolExecution>>();
    // @ts-expect-error Res<History> is read-only
    history.messages = [];
    scratch.notes = [];
    return history.messages.length;
  });
  assertType<Equal<typeof body, ToolSystem<unknown, number, undefined>>>();
  // the returned body is (args, execution, ctx) => Promise<R>
  const asExecute: (args: unknown, execution: ToolExecution, ctx: SystemContext) => Promise<number> = body;
  void asExecute;
  // @ts-expect-error the calling context is required
  void (() => body({}, {} as ToolExecution));
});

test('args typed by an annotation in fn', () => {
  const body = toolSystem([Res(History)], (history, args: { q: string }) => `${history.messages.length}${args.q}`);
  assertType<Equal<Parameters<typeof body>[0], { q: string }>>();
  expect(body.params).toHaveLength(1);
});

test('args typed by toolSystem<Args>(params, fn)', () => {
  const body = toolSystem<{ q: string }>([Res(History), ResMut(Scratchpad)], (history: Readonly<History>, scratch: Scratchpad, args, _execution) => {
    assertType<Equal<typeof args, { q: string }>>();
    assertType<Equal<typeof _execution, ToolExecution>>();
    // @ts-expect-error no such argument
    void args.nope;
    scratch.notes.push(args.q);
    return history.messages.length;
  });
  assertType<Equal<Parameters<typeof body>[0], { q: string }>>();
  const none = toolSystem<{ n: number }>([], (args) => args.n + 1);
  assertType<Equal<Parameters<typeof none>[0], { n: number }>>();
  expect([body.params.length, none.params.length]).toEqual([2, 0]);
});

test('args typed by an inline JSON Schema in { parameters }', () => {
  const body = toolSystem([Res(History)], (_history, args) => {
    assertType<
      Equal<
        typeof args,
        {
          text: string;
          priority: 'low' | 'high';
          tags?: string[];
          limit?: number;
          nested?: { on: boolean; value?: string | null };
        }
      >
    >();
    return args.text;
  }, {
    parameters: {
      type: 'object',
      properties: {
        text: { type: 'string' },
        priority: { enum: ['low', 'high'] },
        tags: { type: 'array', items: { type: 'string' } },
        limit: { type: 'integer' },
        nested: { type: 'object', properties: { on: { type: 'boolean' }, value: { type: ['string', 'null'] } }, required: ['on'] },
      },
      required: ['text', 'priority'],
    },
  });
  assertType<Equal<ReturnType<typeof body>, Promise<string>>>();
  expect(body.parameters.required).toEqual(['text', 'priority']);
});

test('args typed by a Standard Schema (zod 4) in { parameters }', () => {
  const parameters = z.object({ city: z.string(), days: z.number().optional() });
  const body = toolSystem([Res(History)], (_history, args) => {
    assertType<Equal<typeof args, { city: string; days?: number | undefined }>>();
    // @ts-expect-error not in the schema
    void args.country;
    return args.city;
  }, { parameters });
  expect(body.parameters).toBe(parameters);
});
