/**
 * `new Server(options)`: defaults, validation, and `server.options` (SPEC §10.2, §10.5).
 */
import { Server } from '../../src/index.js';

test('defaults: disposeTimeoutMs 10,000, borrows fail, borrowTimeoutMs 30,000; frozen', () => {
  const s = new Server();
  expect(s.options).toEqual({ disposeTimeoutMs: 10_000, borrows: 'fail', borrowTimeoutMs: 30_000 });
  expect(Object.isFrozen(s.options)).toBe(true);
  expect(new Server({}).options).toEqual(s.options);
});

test('given options are kept, the others defaulted; the caller’s object is copied', () => {
  const given = { disposeTimeoutMs: 0, borrows: 'wait' as const };
  const s = new Server(given);
  expect(s.options).toEqual({ disposeTimeoutMs: 0, borrows: 'wait', borrowTimeoutMs: 30_000 });
  (given as { disposeTimeoutMs: number }).disposeTimeoutMs = 5;
  expect(s.options.disposeTimeoutMs).toBe(0);
  expect(new Server({ borrowTimeoutMs: 250, borrows: 'fail' }).options).toEqual({ disposeTimeoutMs: 10_000, borrows: 'fail', borrowTimeoutMs: 250 });
});

test.each([
  [null, TypeError, /options must be an object/],
  ['fast', TypeError, /options must be an object/],
  [[], TypeError, /options must be an object/],
  [{ disposeTimeoutMs: '10' }, TypeError, /disposeTimeoutMs must be a number/],
  [{ disposeTimeoutMs: Number.NaN }, TypeError, /disposeTimeoutMs must be a number/],
  [{ disposeTimeoutMs: -1 }, RangeError, /between 0 and 2147483647/],
  [{ disposeTimeoutMs: Infinity }, RangeError, /between 0 and/],
  [{ borrowTimeoutMs: 2 ** 31 }, RangeError, /borrowTimeoutMs must be between/],
  [{ borrows: 'block' }, TypeError, /borrows must be 'fail' or 'wait'/],
  [{ borrows: true }, TypeError, /borrows must be 'fail' or 'wait'/],
  [{ borrow: 'wait' }, TypeError, /unknown option "borrow".*Did you mean "borrows"/],
  [{ disposeTimeout: 5 }, TypeError, /unknown option "disposeTimeout".*Did you mean "disposeTimeoutMs"/],
])('refuses %p', (options, type, message) => {
  expect(() => new Server(options as never)).toThrow(type);
  expect(() => new Server(options as never)).toThrow(message);
});

test('each option is read once; a throwing getter is a TypeError', () => {
  let reads = 0;
  const opts = {
    get disposeTimeoutMs() {
      reads++;
      return reads === 1 ? 100 : -5;
    },
  };
  expect(new Server(opts).options.disposeTimeoutMs).toBe(100);
  expect(reads).toBe(1);
  const hostile = {
    get borrows(): never {
      throw new Error('trap');
    },
  };
  expect(() => new Server(hostile as never)).toThrow(/reading the options threw \(trap\)/);
});
