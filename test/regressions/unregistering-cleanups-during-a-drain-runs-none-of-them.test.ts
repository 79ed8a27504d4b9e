/**
 * Found in review (this session; older than it): a cleanup that unregistered many other
 * cleanups during its context's disposal made the cleanup stack compact itself while the
 * drain was still popping from the old array, so the unregistered cleanups' empty slots
 * were "called" (`fn is not a function` in the disposal's AggregateError). Registration
 * disposers are such unregistrations too.
 * Fixed: the stack is never compacted while it is being drained.
 */
import { Server, Tools, ToolsPlugin } from '../../src/index.js';
import { tool } from '../tools/helpers.js';

test('a cleanup unregistering many others during disposal: none of them runs, no spurious errors', async () => {
  const server = new Server();
  await server.finish();
  const ctx = server.createContext();
  const ran: number[] = [];
  const offs: (() => void)[] = [];
  for (let i = 0; i < 40; i++) offs.push(ctx.onDispose(() => void ran.push(i)));
  ctx.onDispose(() => {
    for (const off of offs) off();
  });
  await expect(ctx.dispose()).resolves.toBeUndefined();
  expect(ran).toEqual([]);
  await server.dispose();
});

test('a cleanup undoing many tool registrations during disposal: no spurious errors, none left', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const ctx = server.createContext();
  const undo: (() => void)[] = [];
  for (let i = 0; i < 40; i++) undo.push(ctx.get(Tools).register(tool(`t${i}`)));
  ctx.onDispose(() => {
    for (const u of undo) u();
  });
  await expect(ctx.dispose()).resolves.toBeUndefined();
  expect(server.createContext().get(Tools).knownNames()).toEqual([]);
  await server.dispose();
});
