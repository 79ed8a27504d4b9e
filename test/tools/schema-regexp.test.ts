/**
 * `new ToolsPlugin({ regExp })`: the engine for `pattern` and `patternProperties`. The
 * default is JavaScript's backtracking `RegExp` (a catastrophic pattern from an MCP server
 * plus a crafted argument can block the event loop); a linear-time engine such as `re2`
 * can be passed instead. The engine is called when a schema is compiled, and what it
 * returns is what checks the arguments; an engine that refuses a pattern refuses the tool.
 * The first case also guards the wrapper that makes each engine object print as its own
 * pattern (ajv shares compiled patterns by their printed form; the toy engine's objects all
 * print as "[object Object]", and without the wrapper `=tag` was checked by `=yes`).
 */
import { Server, Tools, ToolsPlugin, ToolSchemaError, type ToolsPluginOptions, type ToolsRegExpEngine } from '../../src/index.js';

async function toolsWith(options?: ToolsPluginOptions): Promise<{ server: Server; tools: Tools }> {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(options));
  await server.finish();
  return { server, tools: server.createContext().get(Tools) };
}

const call = (name: string, args: unknown): { callId: string; name: string; arguments: unknown } => ({ callId: 'c1', name, arguments: args });

/**
 * A toy engine that is not `RegExp`: the pattern `=x` matches exactly the text `x`, and a
 * pattern with a nested quantifier is refused, as a linear-time engine refuses
 * backreferences. Records what it was asked to build and test.
 */
function toyEngine(): { engine: ToolsRegExpEngine; built: [string, string][]; tested: string[] } {
  const built: [string, string][] = [];
  const tested: string[] = [];
  const engine: ToolsRegExpEngine = (source, flags) => {
    built.push([source, flags]);
    if (/\([^)]*[+*]\)[+*]/.test(source)) throw new Error('nested quantifiers are not supported');
    return {
      test: (text: string) => {
        tested.push(text);
        return source.startsWith('=') ? text === source.slice(1) : new RegExp(source, flags).test(text);
      },
    };
  };
  return { engine, built, tested };
}

describe('ToolsPlugin regExp engine', () => {
  it('checks pattern and patternProperties with the engine, built once per pattern when the schema is compiled', async () => {
    const { engine, built, tested } = toyEngine();
    const { server, tools } = await toolsWith({ regExp: engine });
    tools.register({
      name: 'pick',
      description: 'pick',
      parameters: { type: 'object', properties: { q: { type: 'string', pattern: '=yes' } }, patternProperties: { '=tag': { type: 'number' } } },
      execute: () => 'ok',
    });
    expect(built).toEqual([
      ['=yes', 'u'],
      ['=tag', 'u'],
    ]);
    // `=yes` is no RegExp a backtracking engine would read this way: the engine decides
    expect((await tools.execute(call('pick', { q: 'yes' }))).isError).toBe(false);
    const refused = await tools.execute(call('pick', { q: 'y' }));
    expect(refused.error?.code).toBe('INVALID_ARGS');
    expect(refused.content).toContain('must match pattern "=yes"');
    const badTag = await tools.execute(call('pick', { q: 'yes', tag: 'one' }));
    expect(badTag.error?.code).toBe('INVALID_ARGS');
    expect(badTag.content).toContain('arguments/tag must be number');
    expect(tested).toEqual(expect.arrayContaining(['yes', 'y', 'tag']));
    expect(built).toHaveLength(2); // calls reuse the compiled engines
    await server.dispose();
  });

  it('refuses a tool whose pattern the engine refuses, naming the pattern and the reason, and leaves nothing registered', async () => {
    const { engine } = toyEngine();
    const { server, tools } = await toolsWith({ regExp: engine });
    const def = { name: 'evil', description: 'x', parameters: { type: 'object', properties: { q: { type: 'string', pattern: '^(a+)+$' } } }, execute: () => 'ok' };
    expect(() => tools.register(def)).toThrow(ToolSchemaError);
    expect(() => tools.register(def)).toThrow('has the pattern "^(a+)+$", which the ToolsPlugin regExp engine refused: nested quantifiers are not supported');
    expect(tools.get('evil')).toBeUndefined();
    // the name is free and the registry works
    tools.register({ ...def, parameters: { type: 'object', properties: { q: { type: 'string', pattern: '^a+$' } } } });
    expect((await tools.execute(call('evil', { q: 'aaa' }))).isError).toBe(false);
    await server.dispose();
  });

  it('refuses a tool when the engine returns something without test()', async () => {
    const { server, tools } = await toolsWith({ regExp: () => ({}) as unknown as { test(text: string): boolean } });
    expect(() => tools.register({ name: 't', description: 't', parameters: { type: 'object', properties: { q: { type: 'string', pattern: 'a' } } }, execute: () => 'ok' })).toThrow(
      /has the pattern "a", which the ToolsPlugin regExp engine refused: it returned .* not an object with a test\(text\) method/,
    );
    expect(tools.get('t')).toBeUndefined();
    await server.dispose();
  });

  it('is per server: the same schema is checked by each server its own way', async () => {
    const { engine } = toyEngine();
    const withEngine = await toolsWith({ regExp: engine });
    const plain = await toolsWith();
    const def = { name: 'p', description: 'p', parameters: { type: 'object', properties: { q: { type: 'string', pattern: '=yes' } } }, execute: () => 'ok' };
    withEngine.tools.register(def);
    plain.tools.register(def);
    // JavaScript's RegExp reads "=yes" as the text "=yes" anywhere in the string
    expect((await withEngine.tools.execute(call('p', { q: 'yes' }))).isError).toBe(false);
    expect((await plain.tools.execute(call('p', { q: 'yes' }))).isError).toBe(true);
    expect((await plain.tools.execute(call('p', { q: 'say =yes' }))).isError).toBe(false);
    await withEngine.server.dispose();
    await plain.server.dispose();
  });

  it('without an engine, pattern is a JavaScript RegExp with the u flag', async () => {
    const { server, tools } = await toolsWith();
    tools.register({ name: 'u', description: 'u', parameters: { type: 'object', properties: { q: { type: 'string', pattern: '^\\p{Lu}+$' } } }, execute: () => 'ok' });
    expect((await tools.execute(call('u', { q: 'ÀB' }))).isError).toBe(false);
    expect((await tools.execute(call('u', { q: 'ab' }))).isError).toBe(true);
    await server.dispose();
  });

  it('refuses a regExp option that is not a function, and a throwing getter, with a TypeError naming the option', () => {
    expect(() => new ToolsPlugin({ regExp: 're2' } as unknown as ToolsPluginOptions)).toThrow(
      "new ToolsPlugin({ regExp }): regExp must be a function (source, flags) => { test(text) } (for example (s, f) => new RE2(s, f)) or omitted, got the string \"re2\".",
    );
    const hostile = Object.defineProperty({}, 'regExp', {
      get() {
        throw new Error('boom');
      },
    });
    expect(() => new ToolsPlugin(hostile as ToolsPluginOptions)).toThrow('new ToolsPlugin(options): reading "regExp" threw: boom');
    expect(() => new ToolsPlugin({ regExp: undefined })).not.toThrow();
  });
});
