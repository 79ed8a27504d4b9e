/**
 * Issue 11 / SPEC §11.1. Bug: `z.toJSONSchema()` output was refused, because of its
 * hidden (non-enumerable) `~standard` property, and a zod schema could not be passed at
 * all. Fixed: on plain JSON a non-enumerable `~standard` is ignored; a Standard Schema is
 * converted once with `~standard.jsonSchema.input({ target })`.
 */
import { z } from 'zod';
import { Server, Tools, ToolsPlugin } from '../../src/index.js';

test('z.toJSONSchema() output and a zod schema both register and are enforced', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const t = server.createContext().get(Tools);
  const Args = z.object({ city: z.string().min(2) });
  t.register({ name: 'json', description: 'd', parameters: z.toJSONSchema(Args), execute: (a) => a.city });
  t.register({ name: 'zod', description: 'd', parameters: Args, execute: (a) => a.city });
  for (const name of ['json', 'zod']) {
    expect((await t.execute({ callId: '1', name, arguments: { city: 'Oslo' } })).content).toBe('Oslo');
    expect((await t.execute({ callId: '2', name, arguments: { city: 'O' } })).error?.code).toBe('INVALID_ARGS');
  }
  await server.dispose();
});
