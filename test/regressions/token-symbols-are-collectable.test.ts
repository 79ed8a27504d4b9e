/**
 * Issue 8 #14. Bug: every symbol `token()` made was kept in a module-level `Set` (to
 * recognise tokens), so a token could never be garbage-collected: a server minting
 * tokens per agent or per request grew forever.
 * Fixed: the registry of made tokens is a `WeakSet` (symbols made by `Symbol(name)` are
 * weak keys on Node 20+). Checked in a child process with `--expose-gc`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const fixture = '.build/test/fixtures/token-gc.js';

test('tokens made, used (insert, get, has, ResMut system) and dropped are collected', () => {
  expect(existsSync(fixture)).toBe(true);
  const out = execFileSync(process.execPath, ['--expose-gc', fixture], { encoding: 'utf8', timeout: 120_000 });
  const { made, alive } = JSON.parse(out.trim().split('\n').pop() as string) as { made: number; alive: number };
  expect(made).toBe(200);
  // A handful may survive in engine caches; before the fix every one of them stayed.
  expect(alive).toBeLessThan(made / 10);
}, 150_000);
