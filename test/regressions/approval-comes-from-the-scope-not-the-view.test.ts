/**
 * Bug (issue 10, SPEC 10.7): `Approval` was looked up from whichever view the call came
 * through. The same refund was refused through billing's own context but approved through
 * the app's view with `scope: billing`.
 * Fixed: `Approval` is `Res(Approval)` from the context of the scope the call resolves in
 * (`scope.ctx`); for the global layer, the global `Approval` only.
 */
import { Approval, Events, Server, Tools, ToolsPlugin, createScope } from '../../src/index.js';

test("a call resolved in an agent's scope asks the agent's Approval, whichever view it came through", async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  const asked: string[] = [];
  const approval = (who: string, answer: boolean) => ({
    approve: () => {
      asked.push(who);
      return answer;
    },
  });
  server.insertGlobal(Approval, approval('global', true));
  await server.finish();
  const app = server.createContext();
  app.insert(Approval, approval('app', true));
  const billing = createScope(app, { id: 'billing' });
  billing.ctx.insert(Approval, approval('billing', false));
  billing.ctx.get(Tools).register({ name: 'refund', description: 'refund', parameters: { type: 'object' }, execute: () => 'refunded' });
  app.get(Tools).register({ name: 'lookup', description: 'lookup', parameters: { type: 'object' }, execute: () => 'found' });
  app.get(Events).on('tools/pre-execute', () => ({ kind: 'ask', reason: 'money' }));
  const own = await billing.ctx.child().get(Tools).execute({ callId: '1', name: 'refund', arguments: {} });
  const viaApp = await app.get(Tools).execute({ callId: '2', name: 'refund', arguments: {}, scope: billing.key });
  expect(own.error).toEqual({ code: 'DENIED', message: 'not approved: money' });
  expect(viaApp.error).toEqual({ code: 'DENIED', message: 'not approved: money' });
  // the global layer asks the global Approval only, never a local of the calling context
  const global = await app.child().get(Tools).execute({ callId: '3', name: 'lookup', arguments: {} });
  expect(global.content).toBe('found');
  expect(asked).toEqual(['billing', 'billing', 'global']);
  await server.dispose();
});
