// Every exported error class has a static is(): true for its instances and its subclasses'
// (also those of another copy of polestar-di in the same process), false for anything else.
import {
  AgentError,
  ContextDisposedError,
  NotLosslessJsonError,
  DisposeTimeoutError,
  ParamError,
  PromptError,
  RegistrationError,
  ServerBuildError,
  ServerError,
  SessionError,
  SystemError,
  token,
  ToolSchemaError,
} from '../../src/index.js';
import { McpMountError, McpToolError } from '../../src/adapters/index.js';
import { LeakError } from '../../src/testing/index.js';
import { branded } from '../../src/util/brand.js';

type Branded = (abstract new (...args: never[]) => Error) & { readonly prototype: Error; readonly is: (value: unknown) => boolean };

const classes: readonly (readonly [string, Branded])[] = [
  ['ParamError', ParamError],
  ['ContextDisposedError', ContextDisposedError],
  ['DisposeTimeoutError', DisposeTimeoutError],
  ['ServerError', ServerError],
  ['ServerBuildError', ServerBuildError],
  ['AgentError', AgentError],
  ['SessionError', SessionError],
  ['SystemError', SystemError],
  ['ToolSchemaError', ToolSchemaError],
  ['PromptError', PromptError],
  ['RegistrationError', RegistrationError],
  ['McpMountError', McpMountError],
  ['McpToolError', McpToolError],
  ['LeakError', LeakError],
  ['NotLosslessJsonError', NotLosslessJsonError],
];

const Key = token<string>('Key');

describe('static is()', () => {
  test('true for an instance, false for other errors, plain objects, clones and the prototype', () => {
    const err = new ParamError('ResourceNotFound', Key);
    expect(ParamError.is(err)).toBe(true);
    expect(ParamError.is(new ContextDisposedError('get(Key)', 'root context'))).toBe(false);
    expect(ParamError.is(new Error('resource not found: Key'))).toBe(false);
    expect(ParamError.is({ name: 'ParamError', kind: 'ResourceNotFound', message: err.message })).toBe(false);
    expect(ParamError.is({ ...err })).toBe(false);
    expect(ParamError.is(structuredClone(err))).toBe(false);
    expect(ParamError.is(ParamError.prototype)).toBe(false);
    for (const v of [undefined, null, 0, 'ParamError', Symbol.for('polestar-di/ParamError'), ParamError]) expect(ParamError.is(v)).toBe(false);
  });

  test('narrows the type', () => {
    const caught: unknown = new SessionError('SESSION_NOT_FOUND', 'no session "s"', { sessionId: 's' });
    // A compile-time check as much as a run-time one: `code` is readable only after narrowing.
    expect(SessionError.is(caught) ? caught.code : undefined).toBe('SESSION_NOT_FOUND');
  });

  test('a subclass is its base; a base is not its subclass', () => {
    expect(ServerError.is(new ServerBuildError('plugin "x" threw'))).toBe(true);
    expect(ServerBuildError.is(new ServerError('finish() twice'))).toBe(false);
    class MyStoreError extends SessionError {}
    const mine = new MyStoreError('STORE_ERROR', 'the store is down');
    expect(SessionError.is(mine)).toBe(true);
    expect(MyStoreError.is(mine)).toBe(true);
    expect(ContextDisposedError.is(new ParamError('BorrowConflict', Key))).toBe(false);
  });

  test('true for an error of another copy of the package, where instanceof is false', () => {
    // A second install defines its own SessionError, branded with the same name.
    class OtherCopySessionError extends Error {
      static readonly is = branded(this, 'SessionError');
      override readonly name = 'SessionError';
    }
    const theirs = new OtherCopySessionError('from the other copy');
    const ours = new SessionError('SESSION_BUSY', 'busy');
    expect(theirs instanceof SessionError).toBe(false);
    expect(SessionError.is(theirs)).toBe(true);
    expect(OtherCopySessionError.is(ours)).toBe(true);
    // ...and only for the class of that name
    expect(ParamError.is(theirs)).toBe(false);
    expect(OtherCopySessionError.is(new AgentError('a1', 'duplicate id'))).toBe(false);
  });

  test('the brand is a registered symbol on the prototype, never an own or enumerable property', () => {
    const err = new AgentError('a1', 'duplicate id');
    const brand = Symbol.for('polestar-di/AgentError');
    expect(brand in err).toBe(true);
    expect(Object.hasOwn(err, brand)).toBe(false);
    expect(Object.getOwnPropertySymbols(err)).toEqual([]);
    expect(Object.getOwnPropertyDescriptor(AgentError.prototype, brand)).toMatchObject({ enumerable: false });
  });

  test.each(classes)('%s.is knows its own instances only (and its subclasses)', (name, cls) => {
    expect(cls.is(Object.create(cls.prototype))).toBe(true);
    expect(Symbol.for(`polestar-di/${name}`) in cls.prototype).toBe(true);
    for (const [, other] of classes) {
      const related = other === cls || other.prototype instanceof cls;
      expect([name, cls.is(Object.create(other.prototype))]).toEqual([name, related]);
    }
  });
});
