/**
 * Issue 11: current MCP servers stamp `"$schema": "https://json-schema.org/draft/2020-12/schema"`
 * (MCP's default dialect); every tool of a real server must register in every dialect it
 * may be stamped with, and be enforced. Schemas: test/tools/schema-mcp-everything.ts.
 */
import { Server, Tools, ToolsPlugin, type DefaultJsonSchemaDialect, type JsonSchema, type SystemContext } from '../../src/index.js';
import { EVERYTHING_TOOLS } from './schema-mcp-everything.js';
import { spyConsole } from './schema-console.js';

async function app(defaultDialect?: DefaultJsonSchemaDialect): Promise<{ server: Server; ctx: SystemContext }> {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(defaultDialect === undefined ? undefined : { defaultDialect }));
  await server.finish();
  return { server, ctx: server.createContext() };
}

const stamps: [string, string | undefined, DefaultJsonSchemaDialect | undefined][] = [
  ['stamped 2020-12 (MCP SDK 2.x)', 'https://json-schema.org/draft/2020-12/schema', undefined],
  ['stamped draft-07 (MCP SDK 1.x)', 'http://json-schema.org/draft-07/schema#', undefined],
  ['stamped 2019-09', 'https://json-schema.org/draft/2019-09/schema', undefined],
  ['unstamped, defaultDialect 2020-12', undefined, '2020-12'],
  ['unstamped, defaultDialect draft-07', undefined, 'draft-07'],
];

test.each(stamps)('every server-everything tool registers %s, is enforced, and nothing is printed', async (_what, uri, defaultDialect) => {
  const out = spyConsole();
  try {
    const { server, ctx } = await app(defaultDialect);
    const tools = ctx.get(Tools);
    expect(EVERYTHING_TOOLS.length).toBeGreaterThanOrEqual(13);
    for (const t of EVERYTHING_TOOLS) {
      const parameters = (uri === undefined ? t.inputSchema : { $schema: uri, ...t.inputSchema }) as JsonSchema;
      tools.register({ name: t.name, description: t.name, parameters, execute: (args) => JSON.stringify(args) });
    }
    expect(tools.knownNames()).toEqual(EVERYTHING_TOOLS.map((t) => t.name));

    const run = async (name: string, args: unknown) => (await tools.execute({ callId: name, name, arguments: args })).error?.code;
    expect(await run('get-sum', { a: 1, b: 2 })).toBeUndefined();
    expect(await run('get-sum', { a: 'two', b: 2 })).toBe('INVALID_ARGS');
    expect(await run('get-sum', { a: 1 })).toBe('INVALID_ARGS');
    expect(await run('get-annotated-message', { messageType: 'error' })).toBeUndefined();
    expect(await run('get-annotated-message', { messageType: 'fatal' })).toBe('INVALID_ARGS');
    expect(await run('get-resource-links', { count: 11 })).toBe('INVALID_ARGS');
    // `format: "uri"` is enforced
    expect(await run('gzip-file-as-resource', { name: 'a.gz', data: 'https://example.com/README.md' })).toBeUndefined();
    expect(await run('gzip-file-as-resource', { name: 'a.gz', data: 'not a uri' })).toBe('INVALID_ARGS');
    await server.dispose();
    expect(out.printed()).toEqual([]);
  } finally {
    out.restore();
  }
});
