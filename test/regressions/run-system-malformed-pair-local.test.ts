// Issue 13 ("at run time it silently drops its argument"): runSystem took any object in
// `locals` that was not a [token, factory] pair as a value to insert, so a pair it did not
// recognise (a first entry that is a symbol not made by token(), a third entry) was
// silently inserted under the token Array and the local the test meant never existed.
// An array is never a value: it is a pair, or a TypeError.
import { Res, system, token } from '../../src/index.js';
import { runSystem } from '../../src/testing/index.js';

const Reply = token<string>('Reply');

const hi = (): string => 'hi';

test.each<[string, unknown[], RegExp]>([
  ['a symbol not made by token()', [Symbol('Reply'), hi], /first entry of a \[token, factory\] pair must be a token/],
  ['three entries', [Reply, hi, 'extra'], /must be a \[token, factory\] pair \(two entries\), got an array of 3 entries/],
])('runSystem refuses a malformed pair in locals (%s) instead of inserting an Array', async (_label, local, pattern) => {
  const read = system([Res(Reply)], (r: string): string => r);
  const err: unknown = await runSystem(read, { locals: [local as never] }).then(
    (r): unknown => r,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TypeError);
  expect((err as Error).message).toMatch(pattern);
});
