/**
 * The value describer of error messages: what each kind of value reads as, in the full and
 * the brief form, and that neither throws for a value that refuses inspection.
 */
import { describeValue } from '../../src/util/describe-value.js';

class Widget {}

function revoked(): object {
  const r = Proxy.revocable({}, {});
  r.revoke();
  return r.proxy;
}

test.each<[string, unknown, string]>([
  ['null', null, 'null'],
  ['undefined', undefined, 'undefined'],
  ['a string', 'hi', 'the string "hi"'],
  ['a long string, cut at 40 characters', 'x'.repeat(50), `the string "${'x'.repeat(40)}…"`],
  ['a number', 5, 'the number 5'],
  ['NaN', Number.NaN, 'the number NaN'],
  ['a boolean', false, 'the boolean false'],
  ['a bigint', 10n, 'the bigint 10'],
  ['a symbol', Symbol('s'), 'Symbol(s) (a symbol not made by token())'],
  ['a named function', function build() {}, 'the function build (arrow functions and methods are not classes)'],
  ['an anonymous function', (() => () => 1)(), 'the function <anonymous> (arrow functions and methods are not classes)'],
  ['a plain object', {}, 'an object (Object)'],
  ['an array', [1], 'an object (Array)'],
  ['an instance', new Widget(), 'an object (Widget)'],
  ['a prototype-less object', Object.create(null), 'an object (no prototype)'],
  ['an object whose constructor is not a class', { constructor: 1 }, 'an object (unnamed class)'],
])('describeValue: %s', (_, value, text) => {
  expect(describeValue(value)).toBe(text);
});

describe('values that refuse inspection are described, never thrown', () => {
  const trapsThrow = new Proxy(
    {},
    {
      get() {
        throw new Error('get trap');
      },
      getPrototypeOf() {
        throw new Error('getPrototypeOf trap');
      },
    },
  );
  const nameThrows = Object.defineProperty(function f() {}, 'name', {
    get() {
      throw new Error('name getter');
    },
  });
  const ctorNameThrows = {
    constructor: Object.defineProperty(function C() {}, 'name', {
      get() {
        throw new Error('name getter');
      },
    }),
  };

  test('describeValue', () => {
    expect(describeValue(revoked())).toBe('an object that refuses inspection (a proxy?)');
    expect(describeValue(trapsThrow)).toBe('an object that refuses inspection (a proxy?)');
    expect(describeValue(nameThrows)).toBe('a function whose name can not be read (a proxy?)');
    expect(describeValue(ctorNameThrows)).toBe('an object (unnamed class)');
  });
});
