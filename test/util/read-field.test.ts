/** Reading one field of caller input: the value once, or a TypeError naming the call and the field. */
import { readField } from '../../src/util/read-field.js';

function throwing(thrown: unknown): object {
  return Object.defineProperty({}, 'x', {
    get() {
      throw thrown;
    },
  });
}

/** What `read` throws (failing the test when it returns). */
function thrownBy(read: () => unknown): TypeError {
  try {
    read();
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return err as TypeError;
  }
  throw new Error('expected the read to throw');
}

test('returns the field, reading its getter once', () => {
  let reads = 0;
  const o = {
    get x() {
      reads++;
      return 'value';
    },
  };
  expect(readField(o, 'x', 'f()')).toBe('value');
  expect(reads).toBe(1);
  expect(readField({}, 'missing', 'f()')).toBeUndefined();
});

test('a throwing getter becomes a TypeError naming where and the field, keeping the cause', () => {
  const boom = new Error('boom');
  const err = thrownBy(() => readField(throwing(boom), 'x', 'f(options)'));
  expect(err.message).toBe('f(options): reading x threw: boom');
  expect(err.cause).toBe(boom);
});

test('the owner prefixes the field, and a fix is appended after the cause text', () => {
  expect(thrownBy(() => readField(throwing(new Error('boom')), 'x', 'f(options)', 'options')).message).toBe('f(options): reading options.x threw: boom');
  expect(thrownBy(() => readField(throwing(new Error('boom')), 'x', 'new Server({ logger })', 'options', 'pass a plain object.')).message).toBe(
    'new Server({ logger }): reading options.x threw (boom); pass a plain object.',
  );
});

test('a thrown non-Error and a proxy trap are reported the same way', () => {
  const text = thrownBy(() => readField(throwing('text'), 'x', 'f()'));
  expect(text.message).toBe('f(): reading x threw: text');
  expect(text.cause).toBe('text');
  expect(thrownBy(() => readField(throwing(5), 'x', 'f()')).message).toBe('f(): reading x threw: the number 5');
  const trap = new Proxy(
    {},
    {
      get() {
        throw new RangeError('trap');
      },
    },
  );
  const fromTrap = thrownBy(() => readField(trap, 'y', 'g()', 'input'));
  expect(fromTrap.message).toBe('g(): reading input.y threw: trap');
  expect(fromTrap.cause).toBeInstanceOf(RangeError);
});
