/**
 * The value describer of error messages: what each kind of value reads as, that it never
 * throws for a value that refuses inspection, and the hints added where a token or a class is
 * expected.
 */
import { describeClassCandidate, describeTokenCandidate, token } from '../../src/context/token.js';
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
  ['a symbol', Symbol('s'), 'the symbol Symbol(s)'],
  ['a named function', function build() {}, 'the function build'],
  ['an anonymous function', (() => () => 1)(), 'the function <anonymous>'],
  ['a plain object', {}, 'an object (Object)'],
  ['an array', [1], 'an object (Array)'],
  ['an instance', new Widget(), 'an object (Widget)'],
  ['a prototype-less object', Object.create(null), 'an object (no prototype)'],
  ['an object whose constructor is not a class', { constructor: 1 }, 'an object (unnamed class)'],
])('describeValue: %s', (_, value, text) => {
  expect(describeValue(value)).toBe(text);
});

describe('where a token or a class is expected, a symbol or a function gets the hint', () => {
  const arrow = (): number => 1;
  test.each<[string, unknown, string]>([
    ['a symbol not made by token()', Symbol('API_KEY'), 'Symbol(API_KEY) (a symbol not made by token())'],
    ['a symbol made by token()', token<string>('API_KEY'), 'the symbol Symbol(API_KEY)'],
    ['an arrow function', arrow, 'the function arrow (arrow functions and methods are not classes)'],
    ['a number', 7, 'the number 7'],
    ['a plain object', {}, 'an object (Object)'],
  ])('describeTokenCandidate: %s', (_, value, text) => {
    expect(describeTokenCandidate(value)).toBe(text);
  });

  test.each<[string, unknown, string]>([
    ['a symbol', Symbol('s'), 'the symbol Symbol(s)'],
    ['a method', { m() {} }.m, 'the function m (arrow functions and methods are not classes)'],
    ['a string', 'Widget', 'the string "Widget"'],
  ])('describeClassCandidate: %s', (_, value, text) => {
    expect(describeClassCandidate(value)).toBe(text);
  });

  test('a function whose name can not be read gets no hint', () => {
    const nameThrows = Object.defineProperty(() => 1, 'name', {
      get() {
        throw new Error('name getter');
      },
    });
    expect(describeTokenCandidate(nameThrows)).toBe('a function whose name can not be read (a proxy?)');
  });
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
