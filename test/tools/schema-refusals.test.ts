/**
 * SPEC §11.1: every refusal of a schema at `register` is a TypeError naming the tool and
 * the schema path, whatever the validator threw; `"$async"` anywhere is refused; a
 * constraint on a property named `__proto__` is refused rather than ignored. A refusal
 * leaves nothing behind.
 */
import { Server, Tools, ToolsPlugin, ToolSchemaError, type SystemContext } from '../../src/index.js';
import { toolRegistryOf } from '../../src/tools/tools.js';
import type { ToolRegistry } from '../../src/tools/registry.js';
import { spyConsole } from './schema-console.js';

async function app(): Promise<{ server: Server; ctx: SystemContext }> {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  return { server, ctx: server.createContext() };
}

const D2020 = 'https://json-schema.org/draft/2020-12/schema';

const cases: [string, () => unknown, string, RegExp][] = [
  ['an unknown $schema', () => ({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' }), 'parameters.$schema', /not a JSON Schema dialect/],
  ['a misspelt type', () => ({ type: 'object', properties: { a: { type: 'strnig' } } }), 'parameters.properties.a.type', /not a valid JSON Schema \(draft-07\)/],
  ['required as a string', () => ({ type: 'object', required: 'a' }), 'parameters.required', /must be array/],
  ['an invalid regex', () => ({ type: 'object', properties: { a: { type: 'string', pattern: '(' } } }), 'parameters.properties.a.pattern', /not a valid regular expression/],
  ['an invalid patternProperties key', () => ({ type: 'object', patternProperties: { '[a-': { type: 'string' } } }), 'parameters.patternProperties.[a-', /not a valid regular expression/],
  ['a $ref to a missing definition', () => ({ type: 'object', properties: { a: { $ref: '#/definitions/nope' } } }), 'parameters.properties.a.$ref', /can not be compiled.*can't resolve reference/],
  ['a remote $ref', () => ({ type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } }), 'parameters.properties.a.$ref', /remote references are not fetched/],
  ['a root $async', () => ({ $async: true, type: 'object' }), 'parameters.$async', /"\$async" is refused/],
  ['a nested $async', () => ({ type: 'object', properties: { a: { $async: true, type: 'string' } } }), 'parameters.properties.a.$async', /"\$async" is refused/],
  ['$async in a $defs entry', () => ({ $schema: D2020, $defs: { x: { $async: false } } }), 'parameters.$defs.x.$async', /"\$async" is refused/],
  ['$async inside an array of schemas', () => ({ anyOf: [{ type: 'string' }, { $async: true }] }), 'parameters.anyOf[1].$async', /"\$async" is refused/],
  ['a __proto__ property', () => JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string","minLength":3}}}'), 'parameters.properties.__proto__', /"__proto__" is refused.*Rename the property/],
  ['a __proto__ pattern property', () => JSON.parse('{"type":"object","patternProperties":{"__proto__":{"type":"string"}}}'), 'parameters.patternProperties.__proto__', /"__proto__" is refused/],
  ['a __proto__ dependency', () => JSON.parse('{"type":"object","dependencies":{"__proto__":["a"]}}'), 'parameters.dependencies.__proto__', /"__proto__" is refused/],
  ['a __proto__ definition', () => JSON.parse('{"definitions":{"__proto__":{"type":"string"}}}'), 'parameters.definitions.__proto__', /"__proto__" is refused/],
  ['a nested $schema of another dialect', () => ({ $schema: D2020, properties: { a: { $schema: 'http://json-schema.org/draft-07/schema#' } } }), 'parameters.properties.a.$schema', /must name the schema's own dialect, 2020-12/],
  ['a $ref to an inherited member of a definitions map', () => ({ type: 'object', definitions: { x: {} }, properties: { a: { $ref: '#/definitions/constructor' } } }), 'parameters.properties.a.$ref', /"#\/definitions\/constructor" does not resolve: "constructor"/],
  ['a $ref to #/__proto__', () => ({ type: 'object', properties: { a: { $ref: '#/__proto__' } } }), 'parameters.properties.a.$ref', /does not resolve: "__proto__"/],
  ['a $ref into a schema\'s inherited member', () => ({ type: 'object', definitions: { x: { type: 'string' } }, properties: { a: { $ref: '#/definitions/x/toString' } } }), 'parameters.properties.a.$ref', /does not resolve: "toString"/],
  ['a $ref to an array\'s inherited member', () => ({ type: 'object', allOf: [{}], properties: { a: { $ref: '#/allOf/length' } } }), 'parameters.properties.a.$ref', /does not resolve: "length"/],
  ['an absolute $ref to an inherited member', () => ({ $schema: D2020, $id: 'https://x.dev/s', $defs: { x: {} }, properties: { a: { $ref: 'https://x.dev/s#/$defs/hasOwnProperty' } } }), 'parameters.properties.a.$ref', /does not resolve: "hasOwnProperty"/],
  // ajv itself overflows the stack on this one: whatever it throws becomes a ToolSchemaError
  ['a schema ajv can not compile (it overflows the stack)', () => ({ $schema: D2020, $defs: { inner: { $id: 'https://x.dev/inner', $defs: { n: {} }, $ref: '#/$defs/n' } }, properties: { e: { $ref: '#/$defs/inner' } } }), 'parameters', /can not be compiled as a JSON Schema \(2020-12\): Maximum call stack size exceeded/],
  ['two subschemas with one $id', () => ({ $schema: D2020, $defs: { a: { $id: 'https://x.dev/a', type: 'string' }, b: { $id: 'https://x.dev/a', type: 'number' } } }), 'parameters', /can not be compiled/],
];

describe('refusals', () => {
  test.each(cases)('%s', async (_what, parameters, path, message) => {
    const out = spyConsole();
    try {
      const { server, ctx } = await app();
      const tools = ctx.get(Tools);
      let err: unknown;
      try {
        tools.register({ name: 'my_tool', description: 'd', parameters: parameters() as never, execute: () => 'x' });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TypeError);
      expect(err).toBeInstanceOf(ToolSchemaError);
      const e = err as ToolSchemaError;
      expect({ tool: e.tool, path: e.path }).toEqual({ tool: 'my_tool', path });
      expect(e.message.startsWith(`Tools.register(my_tool): ${path}: `)).toBe(true);
      expect(e.message).toMatch(message);
      // nothing is left behind: the name is free and no validator is held
      expect(tools.visible()).toEqual([]);
      expect((toolRegistryOf(server) as ToolRegistry).validatorCount).toBe(0);
      expect(() => tools.register({ name: 'my_tool', description: 'd', parameters: { type: 'object' }, execute: () => 'x' })).not.toThrow();
      await server.dispose();
      expect(out.printed()).toEqual([]);
    } finally {
      out.restore();
    }
  });

  test('JSON pointer references through own properties resolve (a definition named constructor, an array index, an embedded resource)', async () => {
    const { server, ctx } = await app();
    const tools = ctx.get(Tools);
    tools.register({
      name: 'refs',
      description: 'd',
      parameters: {
        $schema: D2020,
        type: 'object',
        $defs: { constructor: { type: 'string' }, 'a/b': { type: 'number' }, inner: { $id: 'https://x.dev/inner', $defs: { n: { type: 'boolean' } }, properties: { v: { $ref: '#/$defs/n' } } } },
        prefixItems: [{ type: 'null' }],
        properties: { c: { $ref: '#/$defs/constructor' }, s: { $ref: '#/$defs/a~1b' }, i: { $ref: '#/prefixItems/0' }, e: { $ref: 'https://x.dev/inner' } },
      },
      execute: () => 'ok',
    });
    const run = async (args: unknown) => (await tools.execute({ callId: '1', name: 'refs', arguments: args })).error?.code;
    expect(await run({ c: 'x', s: 1, i: null, e: { v: true } })).toBeUndefined();
    for (const bad of [{ c: 1 }, { s: 'x' }, { i: 0 }, { e: { v: 'x' } }]) expect(await run(bad)).toBe('INVALID_ARGS');
    await server.dispose();
  });

  test('"__proto__" as a value (required, dependentRequired) is accepted and enforced', async () => {
    const { server, ctx } = await app();
    const tools = ctx.get(Tools);
    tools.register({ name: 'r', description: 'd', parameters: { type: 'object', required: ['__proto__'] }, execute: () => 'x' });
    tools.register({ name: 'dr', description: 'd', parameters: { $schema: D2020, type: 'object', dependentRequired: { a: ['__proto__'] } }, execute: () => 'x' });
    const own = JSON.parse('{"__proto__": 1, "a": 1}') as unknown;
    expect((await tools.execute({ callId: '1', name: 'r', arguments: {} })).error?.code).toBe('INVALID_ARGS');
    expect((await tools.execute({ callId: '2', name: 'r', arguments: own })).isError).toBe(false);
    expect((await tools.execute({ callId: '3', name: 'dr', arguments: { a: 1 } })).error?.code).toBe('INVALID_ARGS');
    expect((await tools.execute({ callId: '4', name: 'dr', arguments: own })).isError).toBe(false);
    await server.dispose();
  });

  test('a property is present only when it is the arguments\' own: inherited names (toString, constructor) are checked', async () => {
    const { server, ctx } = await app();
    const tools = ctx.get(Tools);
    tools.register({ name: 'req', description: 'd', parameters: { type: 'object', required: ['toString', 'constructor'] }, execute: () => 'x' });
    tools.register({ name: 'prop', description: 'd', parameters: { type: 'object', properties: { toString: { type: 'string' } } }, execute: () => 'x' });
    expect((await tools.execute({ callId: '1', name: 'req', arguments: {} })).error?.code).toBe('INVALID_ARGS');
    expect((await tools.execute({ callId: '2', name: 'req', arguments: { toString: 1, constructor: 2 } })).isError).toBe(false);
    expect((await tools.execute({ callId: '3', name: 'prop', arguments: {} })).isError).toBe(false);
    expect((await tools.execute({ callId: '4', name: 'prop', arguments: { toString: 1 } })).error?.code).toBe('INVALID_ARGS');
    await server.dispose();
  });

  test('a refused schema in a scope leaves the scope\'s other tools and the shared validators intact', async () => {
    const { server, ctx } = await app();
    const tools = ctx.get(Tools);
    const params = { type: 'object', properties: { q: { type: 'string' } } };
    tools.register({ name: 'ok', description: 'd', parameters: params, execute: () => 'x' });
    expect(() => tools.register({ name: 'bad', description: 'd', parameters: { ...params, $async: true }, execute: () => 'x' })).toThrow(ToolSchemaError);
    expect(tools.visible().map((t) => t.name)).toEqual(['ok']);
    expect((toolRegistryOf(server) as ToolRegistry).validatorCount).toBe(1);
    expect((await tools.execute({ callId: '1', name: 'ok', arguments: { q: 1 } })).error?.code).toBe('INVALID_ARGS');
    await server.dispose();
  });
});
