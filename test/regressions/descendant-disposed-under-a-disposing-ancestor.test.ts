/**
 * Found in review of the synchronous disposal (this session): a descendant whose
 * disposal was started on its own (`void child.dispose()`) while an ancestor's disposal
 * was running — from an abort listener of the ancestor's signal, a sibling's cleanup or
 * an `agent/disposed` listener — ran to its end at once and left its parent, so the
 * ancestor's drive never saw it: its failure was missing from the ancestor's
 * AggregateError, and its dropped promise was an unhandled rejection (which kills a
 * process run with Node's default `--unhandled-rejections=throw`). The last two
 * scenarios already lost the error before, depending on timing.
 * Fixed: such a descendant stays linked until the ancestor's drive reaches it, awaits it
 * and collects its errors; its own promise is marked handled. Checked in a child process
 * (jest hides `unhandledRejection` from tests).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const fixture = '.build/test/fixtures/descendant-failures.js';

test("a descendant's failure reaches its disposing ancestor and is never unhandled", () => {
  expect(existsSync(fixture)).toBe(true);
  const out = execFileSync(process.execPath, [fixture], { encoding: 'utf8', timeout: 60_000 });
  const { results, unhandled } = JSON.parse(out.trim().split('\n').pop() as string) as { results: Record<string, string>; unhandled: number };
  expect(results).toEqual({
    'abort listener of the root disposes a child': expect.stringMatching(/child cleanup failed/),
    "abort listener of an agent's context disposes its session": expect.stringMatching(/session cleanup failed/),
    "a newer sibling's cleanup disposes an older sibling": expect.stringMatching(/older cleanup failed/),
    'an agent/disposed listener disposes the agent’s session': expect.stringMatching(/session cleanup failed/),
    "a descendant's promise asked for (and dropped) during the ancestor's drive": expect.stringMatching(/asked cleanup failed/),
  });
  expect(unhandled).toBe(0);
}, 90_000);
