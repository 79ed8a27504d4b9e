/**
 * Found by a second reading of the perf change (issue 9): `Tools.register` interned the
 * parameters (a validator reference) before binding `execute`, so a definition refused
 * after that point (an `execute` whose `bind` throws, e.g. a revoked proxy) kept its
 * validator alive forever; and it checked `annotations` before `parameters`, so a
 * definition with both wrong reported the annotations (main reported the parameters).
 */
import { NotLosslessJsonError, Tools } from '../../src/index.js';
import { toolRegistryOf } from '../../src/tools/tools.js';
import { toolServer } from '../tools/helpers.js';

test('an execute that is a revoked proxy is refused and leaves no validator reference', async () => {
  const { server, app } = await toolServer();
  const { proxy, revoke } = Proxy.revocable(function () {}, {});
  revoke();
  expect(() => app.get(Tools).register({ name: 't', description: 'd', parameters: { type: 'object' }, execute: proxy } as never)).toThrow(TypeError);
  expect(toolRegistryOf(server)?.validatorCount).toBe(0);
  await server.dispose();
});

test('an execute whose bind throws is refused and leaves no validator reference', async () => {
  const { server, app } = await toolServer();
  const execute = function (): string {
    return 'x';
  };
  Object.defineProperty(execute, 'bind', {
    value: () => {
      throw new Error('no bind');
    },
  });
  const parameters = { type: 'object', properties: { zz: { type: 'string' } } };
  expect(() => app.get(Tools).register({ name: 't', description: 'd', parameters, execute } as never)).toThrow('no bind');
  expect(toolRegistryOf(server)?.validatorCount).toBe(0);
  // the same schema object registers fine afterwards (a template, if any, is not a reference)
  app.get(Tools).register({ name: 't', description: 'd', parameters, execute: () => 'ok' });
  expect(toolRegistryOf(server)?.validatorCount).toBe(1);
  await server.dispose();
  expect(toolRegistryOf(server)?.validatorCount).toBe(0);
});

test('bad parameters are reported before bad annotations', async () => {
  const { server, app } = await toolServer();
  let err: unknown;
  try {
    app.get(Tools).register({ name: 't', description: 'd', parameters: { type: 'object', x: undefined }, annotations: { y: Number.NaN }, execute: () => 'x' } as never);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(NotLosslessJsonError);
  expect((err as Error).message).toContain('tool parameters');
  expect(toolRegistryOf(server)?.validatorCount).toBe(0);
  await server.dispose();
});
