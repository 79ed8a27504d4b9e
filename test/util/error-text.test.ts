/**
 * The text of a caught value: an Error's message, a string as it is, anything else
 * described; never a throw, whatever the caught value does when it is read.
 */
import { runInNewContext } from 'node:vm';
import { errorText } from '../../src/util/error-text.js';

class AppError extends Error {}

test.each<[string, unknown, string]>([
  ['an Error', new Error('boom'), 'boom'],
  ['an Error subclass', new AppError('app failed'), 'app failed'],
  ['an Error with an empty message', new Error(), ''],
  ['a thrown string', 'plain text', 'plain text'],
  ['a thrown number', 42, 'the number 42'],
  ['undefined', undefined, 'undefined'],
  ['null', null, 'null'],
  ['a plain object', { message: 'not an Error' }, 'an object (Object)'],
])('%s', (_, err, text) => {
  expect(errorText(err)).toBe(text);
});

test("an Error whose message is not a string gives that value's string", () => {
  const err = new Error('x');
  Object.defineProperty(err, 'message', { value: 7 });
  expect(errorText(err)).toBe('7');
});

describe('hostile values give a fixed text instead of throwing', () => {
  test('an Error whose message getter throws', () => {
    const err = new Error('x');
    Object.defineProperty(err, 'message', {
      get() {
        throw new Error('getter');
      },
    });
    expect(errorText(err)).toBe('an error that refuses inspection');
  });

  test("an Error whose message is an object whose toString throws", () => {
    const err = new Error('x');
    Object.defineProperty(err, 'message', {
      value: {
        toString() {
          throw new Error('toString');
        },
      },
    });
    expect(errorText(err)).toBe('an error that refuses inspection');
  });

  test('a proxy whose getPrototypeOf trap throws (instanceof throws)', () => {
    const p = new Proxy(
      {},
      {
        getPrototypeOf() {
          throw new Error('trap');
        },
      },
    );
    expect(errorText(p)).toBe('an error that refuses inspection');
  });

  test('a revoked proxy', () => {
    const r = Proxy.revocable({}, {});
    r.revoke();
    expect(errorText(r.proxy)).toBe('an error that refuses inspection');
  });

  test('an object whose toString throws is described, not stringified', () => {
    const o = {
      toString() {
        throw new Error('toString');
      },
    };
    expect(errorText(o)).toBe('an object (Object)');
  });

  test('an error made in another realm gives its message, not a description', () => {
    const foreign: unknown = runInNewContext('new RangeError("from the sandbox")');
    expect(foreign instanceof Error).toBe(false);
    expect(errorText(foreign)).toBe('from the sandbox');
  });
});
