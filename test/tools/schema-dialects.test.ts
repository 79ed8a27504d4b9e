/**
 * SPEC §11.1: `parameters` are validated by the dialect their `$schema` names (draft-07
 * with or without `#`, 2019-09, 2020-12), a schema without `$schema` by `ToolsPlugin`'s
 * `defaultDialect`, any other `$schema` refused; `format` enforced; nothing printed.
 * Issue 11's regression matrix: each row checks accept/refuse and, when accepted, that
 * the schema is enforced (a valid call runs, an invalid one is INVALID_ARGS).
 */
import { Server, Tools, ToolsPlugin, ToolSchemaError, type DefaultJsonSchemaDialect, type JsonSchema, type SystemContext, type Tool } from '../../src/index.js';
import { toolRegistryOf } from '../../src/tools/tools.js';
import type { ToolRegistry } from '../../src/tools/registry.js';
import { spyConsole } from './schema-console.js';

const D07 = 'http://json-schema.org/draft-07/schema#';
const D07_NO_HASH = 'http://json-schema.org/draft-07/schema';
const D2019 = 'https://json-schema.org/draft/2019-09/schema';
const D2020 = 'https://json-schema.org/draft/2020-12/schema';

function stored(tools: Tools, name: string): Tool {
  const t = tools.get(name);
  if (t === undefined) throw new Error(`no tool ${name}`);
  return t;
}

async function app(defaultDialect?: DefaultJsonSchemaDialect): Promise<{ server: Server; ctx: SystemContext }> {
  const server = new Server();
  server.addPlugins(defaultDialect === undefined ? new ToolsPlugin() : new ToolsPlugin({ defaultDialect }));
  await server.finish();
  return { server, ctx: server.createContext() };
}

interface Row {
  readonly what: string;
  readonly parameters: Record<string, unknown>;
  readonly defaultDialect?: DefaultJsonSchemaDialect;
  readonly valid: readonly unknown[];
  readonly invalid: readonly unknown[];
}

const withSchema = (uri: string | undefined, s: Record<string, unknown>): JsonSchema => (uri === undefined ? s : { $schema: uri, ...s }) as JsonSchema;
const intProp = { type: 'object', properties: { n: { type: 'integer', minimum: 0 } }, required: ['n'] };
const formats = {
  type: 'object',
  properties: {
    email: { type: 'string', format: 'email' },
    uri: { type: 'string', format: 'uri' },
    when: { type: 'string', format: 'date-time' },
    id: { type: 'string', format: 'uuid' },
  },
};
const formatValid = [{ email: 'a@b.co', uri: 'https://x.dev/a', when: '2026-01-01T10:00:00Z', id: '123e4567-e89b-12d3-a456-426614174000' }];
const formatInvalid = [{ email: 'nope' }, { uri: 'not a uri' }, { when: 'yesterday' }, { id: '42' }];

const rows: Row[] = [
  { what: 'no $schema (draft-07 by default)', parameters: intProp, valid: [{ n: 1 }], invalid: [{ n: 'x' }, { n: -1 }, {}] },
  { what: 'draft-07 with #', parameters: withSchema(D07, intProp), valid: [{ n: 1 }], invalid: [{ n: 1.5 }] },
  { what: 'draft-07 without #', parameters: withSchema(D07_NO_HASH, intProp), valid: [{ n: 1 }], invalid: [{ n: 1.5 }] },
  { what: '2019-09', parameters: withSchema(D2019, intProp), valid: [{ n: 1 }], invalid: [{ n: 1.5 }] },
  { what: '2019-09 with #', parameters: withSchema(`${D2019}#`, intProp), valid: [{ n: 1 }], invalid: [{ n: 1.5 }] },
  { what: '2020-12', parameters: withSchema(D2020, intProp), valid: [{ n: 1 }], invalid: [{ n: 1.5 }] },
  { what: '2020-12 with #', parameters: withSchema(`${D2020}#`, intProp), valid: [{ n: 1 }], invalid: [{ n: 1.5 }] },
  {
    what: '2020-12 prefixItems + items: false',
    parameters: withSchema(D2020, { type: 'object', properties: { t: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false } } }),
    valid: [{ t: ['a', 1] }, { t: ['a'] }],
    invalid: [{ t: ['a', 'b'] }, { t: ['a', 1, 2] }],
  },
  {
    what: '2020-12 unevaluatedProperties',
    parameters: withSchema(D2020, { type: 'object', allOf: [{ properties: { a: { type: 'string' } } }], unevaluatedProperties: false }),
    valid: [{ a: 'x' }, {}],
    invalid: [{ a: 'x', b: 1 }],
  },
  {
    what: '2020-12 dependentRequired',
    parameters: withSchema(D2020, { type: 'object', dependentRequired: { card: ['cvv'] } }),
    valid: [{}, { card: '1', cvv: '2' }],
    invalid: [{ card: '1' }],
  },
  {
    what: '2019-09 dependentRequired + unevaluatedProperties',
    parameters: withSchema(D2019, { type: 'object', properties: { card: {}, cvv: {} }, dependentRequired: { card: ['cvv'] }, unevaluatedProperties: false }),
    valid: [{ card: 1, cvv: 2 }],
    invalid: [{ card: 1 }, { other: 1 }],
  },
  {
    what: 'no $schema under defaultDialect 2020-12: prefixItems enforced',
    defaultDialect: '2020-12',
    parameters: { type: 'object', properties: { t: { type: 'array', prefixItems: [{ type: 'string' }], items: false } } },
    valid: [{ t: ['a'] }],
    invalid: [{ t: [1] }, { t: ['a', 'b'] }],
  },
  {
    what: '2020-12 $defs + $ref, recursive',
    parameters: withSchema(D2020, {
      type: 'object',
      properties: { tree: { $ref: '#/$defs/node' } },
      $defs: { node: { type: 'object', properties: { v: { type: 'number' }, kids: { type: 'array', items: { $ref: '#/$defs/node' } } }, required: ['v'] } },
    }),
    valid: [{ tree: { v: 1, kids: [{ v: 2, kids: [] }] } }],
    invalid: [{ tree: { v: 1, kids: [{ kids: [] }] } }],
  },
  {
    what: 'draft-07 definitions + $ref',
    parameters: withSchema(D07, { type: 'object', properties: { a: { $ref: '#/definitions/s' } }, definitions: { s: { type: 'string', minLength: 2 } } }),
    valid: [{ a: 'ab' }],
    invalid: [{ a: 'a' }],
  },
  {
    what: 'recursive $ref "#"',
    parameters: { type: 'object', properties: { child: { $ref: '#' }, n: { type: 'number' } }, additionalProperties: false },
    valid: [{ child: { child: { n: 1 } } }],
    invalid: [{ child: { child: { x: 1 } } }],
  },
  {
    what: 'absolute $id + $ref to it',
    parameters: withSchema(D2020, { $id: 'https://example.com/schemas/p', type: 'object', properties: { a: { $ref: 'https://example.com/schemas/p#/$defs/a' } }, $defs: { a: { type: 'boolean' } } }),
    valid: [{ a: true }],
    invalid: [{ a: 'yes' }],
  },
  { what: 'formats, no $schema', parameters: formats, valid: formatValid, invalid: formatInvalid },
  { what: 'formats, draft-07', parameters: withSchema(D07, formats), valid: formatValid, invalid: formatInvalid },
  { what: 'formats, 2019-09', parameters: withSchema(D2019, formats), valid: formatValid, invalid: formatInvalid },
  { what: 'formats, 2020-12', parameters: withSchema(D2020, formats), valid: formatValid, invalid: formatInvalid },
  {
    what: 'unknown keywords are annotations',
    parameters: { type: 'object', 'x-foo': { bar: 1 }, markdownDescription: '*q*', properties: { q: { type: 'string', deprecated: true, examples: ['a'] } } },
    valid: [{ q: 'a' }],
    invalid: [{ q: 1 }],
  },
  {
    what: 'type unions, const, enum, oneOf',
    parameters: { type: 'object', properties: { a: { type: ['string', 'null'] }, b: { const: 3 }, c: { enum: ['x', 'y'] }, d: { oneOf: [{ type: 'string' }, { type: 'number' }] } } },
    valid: [{ a: null, b: 3, c: 'x', d: 1 }],
    invalid: [{ a: 1 }, { b: 4 }, { c: 'z' }, { d: true }],
  },
  {
    what: 'a \\p{L} pattern (unicode)',
    parameters: { type: 'object', properties: { w: { type: 'string', pattern: '^\\p{L}+$' } } },
    valid: [{ w: 'héllo' }],
    invalid: [{ w: 'h3llo' }],
  },
];

describe('every dialect is accepted and enforced', () => {
  test.each(rows.map((r) => [r.what, r] as const))('%s', async (_what, row) => {
    const out = spyConsole();
    try {
      const { server, ctx } = await app(row.defaultDialect);
      const tools = ctx.get(Tools);
      const calls: unknown[] = [];
      tools.register({ name: 't', description: 'd', parameters: row.parameters as never, execute: (args: unknown) => void calls.push(args) });
      for (const [i, args] of row.valid.entries()) {
        const r = await tools.execute({ callId: `v${i}`, name: 't', arguments: args });
        expect({ args, error: r.error }).toEqual({ args, error: undefined });
      }
      for (const [i, args] of row.invalid.entries()) {
        const r = await tools.execute({ callId: `i${i}`, name: 't', arguments: args });
        expect({ args, code: r.error?.code }).toEqual({ args, code: 'INVALID_ARGS' });
      }
      expect(calls).toEqual(row.valid);
      await server.dispose();
      expect(out.printed()).toEqual([]);
    } finally {
      out.restore();
    }
  });
});

describe('other $schema values are refused with a TypeError naming the tool and the path', () => {
  const refused: [string, unknown][] = [
    ['draft-04', 'http://json-schema.org/draft-04/schema#'],
    ['draft-06', 'http://json-schema.org/draft-06/schema#'],
    ['draft-07 over https', 'https://json-schema.org/draft-07/schema#'],
    ['2020-12 over http', 'http://json-schema.org/draft/2020-12/schema'],
    ['a made-up URI', 'https://example.com/my-dialect'],
    ['an empty string', ''],
    ['a number', 7],
  ];
  test.each(refused)('%s', async (_what, uri) => {
    const out = spyConsole();
    try {
      const { server, ctx } = await app();
      const tools = ctx.get(Tools);
      let err: unknown;
      try {
        tools.register({ name: 'weather', description: 'd', parameters: { $schema: uri as never, type: 'object' }, execute: () => 'x' });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TypeError);
      expect(err).toBeInstanceOf(ToolSchemaError);
      expect((err as ToolSchemaError).tool).toBe('weather');
      expect((err as ToolSchemaError).path).toBe('parameters.$schema');
      expect((err as Error).message).toMatch(/^Tools\.register\(weather\): parameters\.\$schema: .*not a JSON Schema dialect/);
      expect((err as Error).message).toContain(D2020);
      expect(tools.visible()).toEqual([]);
      await server.dispose();
      expect(out.printed()).toEqual([]);
    } finally {
      out.restore();
    }
  });
});

describe('dialect-specific refusals', () => {
  test('a draft-04 boolean exclusiveMinimum is refused under draft-07', async () => {
    const { server, ctx } = await app();
    expect(() =>
      ctx.get(Tools).register({ name: 'old', description: 'd', parameters: { type: 'object', properties: { n: { type: 'number', exclusiveMinimum: true } } }, execute: () => 1 }),
    ).toThrow(/^Tools\.register\(old\): parameters\.properties\.n\.exclusiveMinimum: .*must be number/);
    await server.dispose();
  });

  test('a draft-07 tuple (items: [...]) is refused when the default dialect is 2020-12, accepted and enforced under draft-07', async () => {
    const tuple = { type: 'object', properties: { t: { type: 'array', items: [{ type: 'string' }], additionalItems: false } } };
    const a = await app('2020-12');
    expect(() => a.ctx.get(Tools).register({ name: 'tup', description: 'd', parameters: tuple, execute: () => 1 })).toThrow(
      /^Tools\.register\(tup\): parameters\.properties\.t\.items: .*2020-12/,
    );
    await a.server.dispose();
    const b = await app('draft-07');
    b.ctx.get(Tools).register({ name: 'tup', description: 'd', parameters: tuple, execute: () => 1 });
    expect((await b.ctx.get(Tools).execute({ callId: '1', name: 'tup', arguments: { t: ['a', 'b'] } })).error?.code).toBe('INVALID_ARGS');
    expect((await b.ctx.get(Tools).execute({ callId: '2', name: 'tup', arguments: { t: ['a'] } })).isError).toBe(false);
    await b.server.dispose();
  });

  test('identical schemas share one compiled validator; the same text in two dialects does not collide', async () => {
    const { server, ctx } = await app();
    const reg = toolRegistryOf(server) as ToolRegistry;
    const tools = ctx.get(Tools);
    tools.register({ name: 'a', description: 'd', parameters: withSchema(D2020, intProp), execute: () => 1 });
    tools.register({ name: 'b', description: 'd', parameters: withSchema(D2020, intProp), execute: () => 1 });
    expect(reg.validatorCount).toBe(1);
    expect(stored(tools, 'a').parameters).toBe(stored(tools, 'b').parameters);
    tools.register({ name: 'c', description: 'd', parameters: withSchema(D07, intProp), execute: () => 1 });
    tools.register({ name: 'e', description: 'd', parameters: withSchema(D2019, intProp), execute: () => 1 });
    expect(reg.validatorCount).toBe(3);
    for (const name of ['a', 'c', 'e']) expect((await tools.execute({ callId: name, name, arguments: { n: 1.5 } })).error?.code).toBe('INVALID_ARGS');
    await server.dispose();
  });

  test('schemas() shows the schema as registered, $schema included', async () => {
    const { server, ctx } = await app();
    const parameters = withSchema(D2020, intProp);
    ctx.get(Tools).register({ name: 'a', description: 'd', parameters, execute: () => 1 });
    expect(ctx.get(Tools).schemas()).toEqual([{ name: 'a', description: 'd', parameters }]);
    await server.dispose();
  });
});

describe('a keyword of a later dialect is refused, not ignored', () => {
  const later: [string, Record<string, unknown>, string, RegExp][] = [
    ['prefixItems in draft-07 (no $schema)', { type: 'object', properties: { t: { prefixItems: [{ type: 'string' }] } } }, 'parameters.properties.t.prefixItems', /2020-12 keyword, but this schema is read as draft-07/],
    ['unevaluatedProperties in draft-07', { $schema: D07, type: 'object', unevaluatedProperties: false }, 'parameters.unevaluatedProperties', /2019-09 keyword, but this schema is read as draft-07/],
    ['dependentRequired in an allOf branch', { allOf: [{ dependentRequired: { a: ['b'] } }] }, 'parameters.allOf[0].dependentRequired', /2019-09 keyword/],
    ['minContains in a $defs entry', { definitions: { x: { contains: {}, minContains: 2 } } }, 'parameters.definitions.x.minContains', /2019-09 keyword/],
    ['prefixItems in 2019-09', { $schema: D2019, type: 'array', prefixItems: [{ type: 'string' }] }, 'parameters.prefixItems', /2020-12 keyword, but this schema is read as 2019-09/],
  ];
  test.each(later)('%s', async (_what, parameters, path, message) => {
    const { server, ctx } = await app();
    let err: unknown;
    try {
      ctx.get(Tools).register({ name: 'k', description: 'd', parameters: parameters as JsonSchema, execute: () => 1 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ToolSchemaError);
    expect((err as ToolSchemaError).path).toBe(path);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).toContain('"$schema": "https://json-schema.org/draft/2020-12/schema"');
    await server.dispose();
  });

  test('a property, a definition or a const that merely has a later keyword\'s name is not refused', async () => {
    const { server, ctx } = await app();
    const tools = ctx.get(Tools);
    tools.register({
      name: 'names',
      description: 'd',
      parameters: {
        type: 'object',
        properties: { prefixItems: { type: 'string' }, unevaluatedProperties: { type: 'number' } },
        definitions: { dependentRequired: { type: 'boolean' } },
        default: { minContains: 1 },
      },
      execute: () => 1,
    });
    expect((await tools.execute({ callId: '1', name: 'names', arguments: { prefixItems: 1 } })).error?.code).toBe('INVALID_ARGS');
    expect((await tools.execute({ callId: '2', name: 'names', arguments: { prefixItems: 'a', unevaluatedProperties: 2 } })).isError).toBe(false);
    await server.dispose();
  });
});

describe('ToolsPlugin options', () => {
  test('defaultDialect is read once and validated', () => {
    expect(() => new ToolsPlugin({ defaultDialect: '2019-09' as never })).toThrow(/defaultDialect must be 'draft-07' \(the default\) or '2020-12', got the string "2019-09"/);
    expect(() => new ToolsPlugin({ defaultDialect: 'draft-04' as never })).toThrow(TypeError);
    expect(() => new ToolsPlugin(null as never)).toThrow(TypeError);
    let reads = 0;
    const options = {
      get defaultDialect(): DefaultJsonSchemaDialect {
        reads++;
        return reads === 1 ? '2020-12' : ('bogus' as never);
      },
    };
    expect(() => new ToolsPlugin(options)).not.toThrow();
    expect(reads).toBe(1);
    expect(
      () =>
        new ToolsPlugin({
          get defaultDialect(): DefaultJsonSchemaDialect {
            throw new Error('boom');
          },
        }),
    ).toThrow(/reading "defaultDialect" threw: boom/);
  });

  test('the default dialect applies to schemas without $schema only', async () => {
    const { server, ctx } = await app('2020-12');
    const tools = ctx.get(Tools);
    tools.register({ name: 'implicit', description: 'd', parameters: { type: 'object', dependentRequired: { a: ['b'] } }, execute: () => 1 });
    expect((await tools.execute({ callId: '1', name: 'implicit', arguments: { a: 1 } })).error?.code).toBe('INVALID_ARGS');
    // a draft-07 tuple: refused when read as 2020-12, accepted and enforced when stamped draft-07
    const tuple = { type: 'object', properties: { t: { type: 'array', items: [{ type: 'string' }], additionalItems: false } } };
    expect(() => tools.register({ name: 'implicit07', description: 'd', parameters: tuple, execute: () => 1 })).toThrow(ToolSchemaError);
    tools.register({ name: 'explicit07', description: 'd', parameters: withSchema(D07, tuple), execute: () => 1 });
    expect((await tools.execute({ callId: '2', name: 'explicit07', arguments: { t: ['a', 'b'] } })).error?.code).toBe('INVALID_ARGS');
    expect((await tools.execute({ callId: '3', name: 'explicit07', arguments: { t: ['a'] } })).isError).toBe(false);
    await server.dispose();
  });
});
