/**
 * Found by a second reading of `sessions.open`. `open` runs the resume (or create)
 * transaction, and that transaction names its own call in its errors. Bug: an error of an
 * `open` call says `Sessions.resume(...)`, a call the application never made (an
 * AGENT_MISMATCH of a stored session), so the message sends the reader to the wrong line of
 * code. Errors name the call that failed.
 */
import { MemorySessionStore, Sessions } from '../../src/index.js';
import { serverOn } from '../sessions/harness.js';

test('an AGENT_MISMATCH of sessions.open names Sessions.open', async () => {
  const { server, ctx } = await serverOn(new MemorySessionStore());
  try {
    const sessions = ctx.get(Sessions);
    await (await sessions.open({ agentId: 'right', sessionId: 's' })).close();
    const err = await sessions.open({ agentId: 'wrong', sessionId: 's' }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err).toMatchObject({ code: 'AGENT_MISMATCH', sessionId: 's' });
    expect((err as Error).message).toContain('Sessions.open(');
    expect((err as Error).message).not.toContain('Sessions.resume(');
  } finally {
    await server.dispose();
  }
});
