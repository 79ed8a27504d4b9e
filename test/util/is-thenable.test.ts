/** The promise test used before awaiting a callback's result. */
import { isThenable } from '../../src/util/is-thenable.js';

test.each<[string, unknown]>([
  ['a promise', Promise.resolve(1)],
  ['a thenable object', { then() {} }],
  ['a function with a then method', Object.assign(() => 1, { then() {} })],
  ['an object whose then is inherited', Object.create({ then() {} })],
])('%s is thenable', (_, v) => {
  expect(isThenable(v)).toBe(true);
});

test.each<[string, unknown]>([
  ['null', null],
  ['undefined', undefined],
  ['a number', 1],
  ['a string', 'then'],
  ['a plain object', {}],
  ['an object whose then is not callable', { then: 1 }],
  ['a function without then', () => 1],
])('%s is not thenable', (_, v) => {
  expect(isThenable(v)).toBe(false);
});

test('reads then once, and a throwing then getter propagates to the caller', () => {
  let reads = 0;
  const counted = {
    get then() {
      reads++;
      return () => undefined;
    },
  };
  expect(isThenable(counted)).toBe(true);
  expect(reads).toBe(1);
  const hostile = {
    get then(): never {
      throw new Error('then getter');
    },
  };
  expect(() => isThenable(hostile)).toThrow('then getter');
});
