/**
 * TypeBox (`@sinclair/typebox` up to 0.34, the one Fastify uses) builds JSON Schema
 * objects marked with a `Symbol.for('TypeBox.Kind')` key on every schema object. Symbol
 * keys are not JSON, so such a schema is refused like any other (SPEC §7); the refusal
 * says how to pass one, and that way works. Built by hand here with the same marker, so the
 * test needs no TypeBox install.
 */
import { NotLosslessJsonError, Tools } from '../../src/index.js';
import { tool, toolServer } from './helpers.js';

const Kind = Symbol.for('TypeBox.Kind');

/** What `Type.Object({ q: Type.String() })` returns in TypeBox 0.34. */
function typeboxObject(): Record<string | symbol, unknown> {
  return { [Kind]: 'Object', type: 'object', required: ['q'], properties: { q: { [Kind]: 'String', type: 'string' } } };
}

test('a TypeBox schema is refused with a reason that says how to pass it; its JSON registers and validates', async () => {
  const { server, app } = await toolServer();
  const tools = app.get(Tools);
  const schema = typeboxObject();
  let err: unknown;
  try {
    tools.register({ ...tool('tb'), parameters: schema as never });
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(NotLosslessJsonError);
  expect((err as Error).message).toBe(
    'Tools.register(tb): tool parameters must be losslessly JSON-serializable: parameters has a symbol key Symbol(TypeBox.Kind) (JSON drops symbol keys); ' +
      "it is a TypeBox schema: pass its JSON, JSON.parse(JSON.stringify(schema)), which is the same schema without TypeBox's markers",
  );
  expect(tools.get('tb')).toBeUndefined();

  tools.register({ ...tool('tb', (args: { q: string }) => `got ${args.q}`), parameters: JSON.parse(JSON.stringify(schema)) as never });
  expect((await tools.execute({ callId: 'c1', name: 'tb', arguments: { q: 'x' } })).content).toBe('got x');
  expect((await tools.execute({ callId: 'c2', name: 'tb', arguments: { q: 1 } })).error?.code).toBe('INVALID_ARGS');
  expect((await tools.execute({ callId: 'c3', name: 'tb', arguments: {} })).error?.code).toBe('INVALID_ARGS');
  await server.dispose();
});

test('another symbol key gets the plain reason, without the TypeBox hint', async () => {
  const { server, app } = await toolServer();
  expect(() => app.get(Tools).register({ ...tool('s'), parameters: { type: 'object', [Symbol('mine')]: 1 } as never })).toThrow(
    /parameters has a symbol key Symbol\(mine\) \(JSON drops symbol keys\)$/,
  );
  await server.dispose();
});
