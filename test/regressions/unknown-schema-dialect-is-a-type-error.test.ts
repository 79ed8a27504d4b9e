/**
 * Issue 8 #15. Bug: an unknown `$schema` made ajv throw a plain `Error` ("no schema with
 * key or ref ...") that named no tool. Fixed: every refusal of a schema at register is a
 * TypeError (`ToolSchemaError`) naming the tool, the schema path and the fix.
 */
import { Server, Tools, ToolsPlugin, ToolSchemaError } from '../../src/index.js';

test('an unknown $schema is a TypeError naming the tool, the path and the dialects accepted', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const t = server.createContext().get(Tools);
  let err: unknown;
  try {
    t.register({ name: 'legacy', description: 'd', parameters: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' }, execute: () => 1 });
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(TypeError);
  expect(err).toBeInstanceOf(ToolSchemaError);
  expect((err as Error).message).toMatch(/^Tools\.register\(legacy\): parameters\.\$schema: /);
  expect((err as Error).message).toContain('https://json-schema.org/draft/2020-12/schema');
  expect((err as Error).message).toContain('omit "$schema"');
  await server.dispose();
});
