/**
 * Bug (issue 8 #8): an abort while `tools/pre-execute`, `Approval.approve` or a guard was
 * pending did nothing until policy answered (forever, for an approval nobody gives), and
 * then the body ran anyway.
 * Fixed (SPEC 10.2): the abort settles the call at once (EXECUTION_ERROR, `tool "x" was
 * aborted: <reason>`); a later answer of the pending policy is ignored and the body never
 * runs.
 */
import { jest } from '@jest/globals';
import { Approval, Events, Server, Tools, ToolsPlugin } from '../../src/index.js';

function gate<T>(): { wait: Promise<T>; open: (v: T) => void } {
  let open!: (v: T) => void;
  const wait = new Promise<T>((r) => (open = r));
  return { wait, open };
}

async function world(approve: () => Promise<boolean>) {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  server.insertGlobal(Approval, { approve });
  await server.finish();
  const app = server.createContext();
  const body = jest.fn(() => 'ran');
  app.get(Tools).register({ name: 'refund', description: 'refund', parameters: { type: 'object' }, execute: body });
  return { server, app, body };
}

const aborted = (reason: string) => ({ code: 'EXECUTION_ERROR', message: `tool "refund" was aborted: ${reason}` });

test.each(['tools/pre-execute', 'Approval.approve', 'a guard'])('an abort while %s is pending settles the call at once; the body never runs', async (phase) => {
  const g = gate<boolean>();
  const reached = gate<undefined>();
  const { server, app, body } = await world(() => {
    reached.open(undefined);
    return g.wait;
  });
  if (phase === 'tools/pre-execute') {
    app.get(Events).on('tools/pre-execute', async (d) => {
      reached.open(undefined);
      await g.wait;
      return d;
    });
  } else if (phase === 'Approval.approve') {
    app.get(Events).on('tools/pre-execute', () => ({ kind: 'ask' }));
  } else {
    app.get(Tools).guard(async () => {
      reached.open(undefined);
      await g.wait;
      return undefined;
    });
  }
  const ac = new AbortController();
  const p = app.get(Tools).execute({ callId: '1', name: 'refund', arguments: {}, signal: ac.signal });
  await reached.wait;
  ac.abort(new Error('user left'));
  expect((await p).error).toEqual(aborted('user left'));
  // the policy answers afterwards: ignored
  g.open(true);
  await new Promise((r) => setTimeout(r, 10));
  expect(body).not.toHaveBeenCalled();
  await server.dispose();
});
