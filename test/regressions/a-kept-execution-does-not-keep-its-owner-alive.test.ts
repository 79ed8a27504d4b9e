/**
 * Found by a second reading of the change that tied a tool call to its registration (the
 * layer entry) instead of the stored record. Bug: the call's state kept the entry, whose
 * `ctx` is the context owning the registration, and an `Execution` keeps its call state;
 * so a tool body (or a `tools/*` listener) that kept its `execution`, as a log does, kept
 * the owner context and every ancestor alive after their disposal (SPEC 10.1: the
 * execution holds no context). Fixed: the call drops the entry when it is over. A third
 * reading found the same leak for a call refused with `INVALID_ARGS` after its tool
 * resolved: it never runs, so it is never "over"; fixed by never giving a refused call the
 * entry. Both checked in a child process with `--expose-gc`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const fixture = '.build/test/fixtures/kept-execution-gc.js';

test.each([
  ['a call that ran (its body keeps the execution)', 'body'],
  ['a call refused with INVALID_ARGS after its tool resolved (a tools/result observer keeps the execution)', 'refused'],
])('an execution kept after %s does not keep the context owning the registration alive', (_what, mode) => {
  if (!existsSync(fixture)) throw new Error(`${fixture} is missing: run \`npx tsc -p tsconfig.run.json\` (npm test does it in pretest)`);
  const out = execFileSync(process.execPath, ['--expose-gc', fixture, mode], { encoding: 'utf8', timeout: 120_000 });
  const { kept, alive } = JSON.parse(out.trim().split('\n').pop() as string) as { kept: number; alive: number };
  expect(kept).toBe(200);
  // One may stay reachable from engine caches; before the fix all 200 did.
  expect(alive).toBeLessThanOrEqual(1);
}, 150_000);
