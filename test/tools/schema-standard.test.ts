/**
 * SPEC §11.1: `parameters` may be a Standard Schema that emits JSON Schema (zod 4's
 * `~standard`): converted once at `register` with `~standard.jsonSchema.input({ target })`
 * (target = the default dialect); that JSON Schema is stored, shown and checked by ajv
 * (the library's own validation is never called), and `args` has the schema's input
 * type. On plain JSON (`z.toJSONSchema()` output) a non-enumerable `~standard` is ignored.
 */
import { z } from 'zod';
import { Server, Tools, ToolsPlugin, ToolSchemaError, type DefaultJsonSchemaDialect, type StandardJsonSchema, type SystemContext, type Tool } from '../../src/index.js';

function stored(tools: Tools, name: string): Tool {
  const t = tools.get(name);
  if (t === undefined) throw new Error(`no tool ${name}`);
  return t;
}

async function app(defaultDialect?: DefaultJsonSchemaDialect): Promise<{ server: Server; ctx: SystemContext }> {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(defaultDialect === undefined ? undefined : { defaultDialect }));
  await server.finish();
  return { server, ctx: server.createContext() };
}

/** Wraps a zod schema's `~standard`, counting conversions and failing if `validate` is ever called. */
function counted<S extends z.ZodType>(schema: S): { schema: S; targets: string[] } {
  const targets: string[] = [];
  const std = schema['~standard'];
  const wrapper = Object.create(schema) as S;
  Object.defineProperty(wrapper, '~standard', {
    value: {
      ...std,
      validate: () => {
        throw new Error('the schema library must not validate');
      },
      jsonSchema: {
        input: (o: { target: string }) => {
          targets.push(o.target);
          return std.jsonSchema.input(o as never);
        },
        output: std.jsonSchema.output,
      },
    },
  });
  return { schema: wrapper, targets };
}

const Search = z.object({ q: z.string().min(2), email: z.email().optional(), limit: z.number().int().max(50).optional() });

describe('Standard Schema parameters', () => {
  test('converted once at register with the default dialect as target; the JSON Schema is stored, shown and checked by ajv', async () => {
    const { server, ctx } = await app();
    const tools = ctx.get(Tools);
    const { schema, targets } = counted(Search);
    const seen: unknown[] = [];
    tools.register({
      name: 'search',
      description: 'd',
      parameters: schema,
      execute: (args) => {
        seen.push(args);
        return args.q;
      },
    });
    expect(targets).toEqual(['draft-07']);
    const expected = Search['~standard'].jsonSchema.input({ target: 'draft-07' });
    expect(expected.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(stored(tools, 'search').parameters).toEqual(expected);
    expect(Object.isFrozen(stored(tools, 'search').parameters)).toBe(true);
    expect(tools.schemas()).toEqual([{ name: 'search', description: 'd', parameters: expected }]);

    const ok = await tools.execute({ callId: '1', name: 'search', arguments: { q: 'hello', limit: 3 } });
    expect(ok.content).toBe('hello');
    for (const bad of [{ q: 'h' }, { q: 'hello', email: 'nope' }, { q: 'hello', limit: 1.5 }, { q: 'hello', limit: 51 }, {}]) {
      expect((await tools.execute({ callId: '2', name: 'search', arguments: bad })).error?.code).toBe('INVALID_ARGS');
    }
    expect(seen).toEqual([{ q: 'hello', limit: 3 }]);
    expect(targets).toEqual(['draft-07']); // never converted again
    await server.dispose();
  });

  test("defaultDialect '2020-12' converts with target 'draft-2020-12' (tuples become prefixItems, enforced)", async () => {
    const { server, ctx } = await app('2020-12');
    const tools = ctx.get(Tools);
    const { schema, targets } = counted(z.object({ pair: z.tuple([z.string(), z.number()]) }));
    tools.register({ name: 'pair', description: 'd', parameters: schema, execute: (args) => args.pair[0] });
    expect(targets).toEqual(['draft-2020-12']);
    const params = stored(tools, 'pair').parameters as { $schema: string; properties: { pair: Record<string, unknown> } };
    expect(params.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(params.properties.pair.prefixItems).toBeDefined();
    expect((await tools.execute({ callId: '1', name: 'pair', arguments: { pair: ['a', 1] } })).content).toBe('a');
    expect((await tools.execute({ callId: '2', name: 'pair', arguments: { pair: ['a', 'b'] } })).error?.code).toBe('INVALID_ARGS');
    expect((await tools.execute({ callId: '3', name: 'pair', arguments: { pair: ['a', 1, 2] } })).error?.code).toBe('INVALID_ARGS');
    await server.dispose();
  });

  test('z.toJSONSchema() output is plain JSON: its non-enumerable ~standard is ignored, not called', async () => {
    const { server, ctx } = await app();
    const tools = ctx.get(Tools);
    const json = z.toJSONSchema(Search); // 2020-12, additionalProperties: false
    expect(Object.getOwnPropertyDescriptor(json, '~standard')?.enumerable).toBe(false);
    tools.register({ name: 'j', description: 'd', parameters: json, execute: (args) => args.q });
    const plain = JSON.parse(JSON.stringify(json)) as Record<string, unknown>;
    expect(stored(tools, 'j').parameters).toEqual(plain);
    expect(Object.getOwnPropertyNames(stored(tools, 'j').parameters)).not.toContain('~standard');
    expect((await tools.execute({ callId: '1', name: 'j', arguments: { q: 'hi' } })).content).toBe('hi');
    expect((await tools.execute({ callId: '2', name: 'j', arguments: { q: 'hi', extra: 1 } })).error?.code).toBe('INVALID_ARGS');
    // the draft-07 target works too
    tools.register({ name: 'j7', description: 'd', parameters: z.toJSONSchema(Search, { target: 'draft-7' }), execute: () => 1 });
    expect((await tools.execute({ callId: '3', name: 'j7', arguments: { q: 'hi', email: 'x' } })).error?.code).toBe('INVALID_ARGS');
    await server.dispose();
  });

  test('a hand-made Standard Schema (an enumerable ~standard on a plain object) is converted', async () => {
    const { server, ctx } = await app();
    const targets: string[] = [];
    const handMade: StandardJsonSchema<{ n: number }> = {
      '~standard': {
        version: 1,
        vendor: 'mine',
        jsonSchema: {
          input: ({ target }) => {
            targets.push(target);
            return { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };
          },
        },
      },
    };
    ctx.get(Tools).register({ name: 'h', description: 'd', parameters: handMade, execute: (args) => args.n * 2 });
    expect(targets).toEqual(['draft-07']);
    expect((await ctx.get(Tools).execute({ callId: '1', name: 'h', arguments: { n: 2 } })).content).toBe('4');
    expect((await ctx.get(Tools).execute({ callId: '2', name: 'h', arguments: {} })).error?.code).toBe('INVALID_ARGS');
    await server.dispose();
  });

  test('a Standard Schema that can not emit JSON Schema, or whose conversion throws, is refused naming the tool', async () => {
    const { server, ctx } = await app();
    const tools = ctx.get(Tools);
    const noJson = { '~standard': { version: 1, vendor: 'v', validate: () => ({ value: 1 }) } };
    expect(() => tools.register({ name: 'a', description: 'd', parameters: noJson as never, execute: () => 1 })).toThrow(ToolSchemaError);
    expect(() => tools.register({ name: 'a', description: 'd', parameters: noJson as never, execute: () => 1 })).toThrow(
      /^Tools\.register\(a\): parameters\.~standard\.jsonSchema\.input: is undefined, not a function/,
    );
    // zod throws for what JSON Schema can not express (a Date)
    const throwing = z.object({ at: z.date() });
    expect(() => tools.register({ name: 'b', description: 'd', parameters: throwing, execute: () => 1 })).toThrow(
      /^Tools\.register\(b\): parameters: converting the Standard Schema to JSON Schema .* threw/,
    );
    const getterThrows = Object.create({}, { '~standard': { get: () => { throw new Error('boom'); } } }) as never;
    expect(() => tools.register({ name: 'c', description: 'd', parameters: getterThrows, execute: () => 1 })).toThrow(/^Tools\.register\(c\): parameters\.~standard: reading it threw: boom/);
    expect(tools.visible()).toEqual([]);
    await server.dispose();
  });

  test('a conversion that is not lossless JSON, or not an object, is refused naming the tool and the path', async () => {
    const { server, ctx } = await app();
    const tools = ctx.get(Tools);
    const returning = (value: unknown): StandardJsonSchema => ({ '~standard': { version: 1, vendor: 'v', jsonSchema: { input: () => value as Record<string, unknown> } } });
    expect(() => tools.register({ name: 'u', description: 'd', parameters: returning({ type: 'object', default: undefined }), execute: () => 1 })).toThrow(
      /^Tools\.register\(u\): the JSON Schema its Standard Schema parameters converted to .* must be losslessly JSON-serializable: parameters\.default is undefined/,
    );
    expect(() => tools.register({ name: 'p', description: 'd', parameters: returning(Promise.resolve({})), execute: () => 1 })).toThrow(/parameters is a Promise instance/);
    expect(() => tools.register({ name: 'a', description: 'd', parameters: returning([]), execute: () => 1 })).toThrow(
      /^Tools\.register\(a\): parameters must be a JSON Schema object, got .* from its Standard Schema/,
    );
    expect(tools.visible()).toEqual([]);
    await server.dispose();
  });

  test('a hostile Proxy as parameters is refused with a TypeError naming the tool', async () => {
    const { server, ctx } = await app();
    const hostile = new Proxy({}, { getPrototypeOf: () => { throw new Error('trap'); }, ownKeys: () => { throw new Error('trap'); } });
    expect(() => ctx.get(Tools).register({ name: 'x', description: 'd', parameters: hostile as never, execute: () => 1 })).toThrow(TypeError);
    expect(() => ctx.get(Tools).register({ name: 'x', description: 'd', parameters: hostile as never, execute: () => 1 })).toThrow(/Tools\.register\(x\)/);
    await server.dispose();
  });

  test('args has the schema input type (type-level)', async () => {
    const { server, ctx } = await app();
    const tools = ctx.get(Tools);
    tools.register({
      name: 't',
      description: 'd',
      parameters: Search,
      execute: (args) => {
        const q: string = args.q;
        const limit: number | undefined = args.limit;
        // @ts-expect-error not in the schema
        void args.nope;
        // @ts-expect-error q is a string
        const n: number = args.q;
        return [q, limit, n];
      },
    });
    const transformed = z.object({ n: z.string().transform((s) => s.length) });
    tools.register({
      name: 'u',
      description: 'd',
      parameters: transformed,
      // the *input* type: ajv checks the input, no transform runs
      execute: (args) => {
        const s: string = args.n;
        return s;
      },
    });
    expect(tools.knownNames()).toEqual(['t', 'u']);
    await server.dispose();
  });
});
