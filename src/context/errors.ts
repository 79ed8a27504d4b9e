/**
 * The errors of the context tree. Every message names the token, the context and the fix.
 */
import { nameOf, type Token } from './token.js';
import { branded } from '../util/brand.js';

/** What a {@link ParamError} is about. */
export type ParamErrorKind = 'ResourceNotFound' | 'BorrowConflict' | 'OutputNotFound' | 'ResourceOutOfScope';

const prefixes: Record<ParamErrorKind, string> = {
  ResourceNotFound: 'resource not found',
  BorrowConflict: 'borrow conflict',
  OutputNotFound: 'output not found',
  ResourceOutOfScope: 'resource out of scope',
};

/** The message part naming a resolution path (`''` without one). */
function resolvingText(path: readonly string[] | undefined): string {
  return path === undefined ? '' : ` (resolving ${path.join(' → ')})`;
}

/**
 * A resource or output could not be fetched. The message begins exactly
 * `resource not found: <Name>`, `borrow conflict: <Name>`, `output not found: <Name>` or
 * `resource out of scope: <Name>` (a parent filter blocked it), and may add a
 * hint after. Thrown while `ctx.resolve(Class)` builds a class, it also names the
 * resolution path: `resource not found: ApiKey (resolving Handler → Service → Client → ApiKey) (...)`.
 */
export class ParamError extends Error {
  /**
   * True when `value` is an instance of `ParamError` or of a subclass, also one made by
   * another copy of polestar-di loaded in the same process (where `instanceof` is false).
   */
  static readonly is = branded(this, 'ParamError');
  /** Always `'ParamError'`; check {@link ParamError.kind} for which rule failed. */
  override readonly name = 'ParamError';
  /** Which rule failed. */
  readonly kind: ParamErrorKind;
  /** The token that could not be fetched. */
  readonly token: Token;
  /**
   * For an error thrown while `ctx.resolve(Class)` built a class: the names from the class
   * asked for to the token that failed, e.g. `['Handler', 'Service', 'Client', 'ApiKey']`
   * (each class needed the next). `undefined` for any other fetch (`ctx.get`, a system's
   * parameter, ...).
   */
  readonly path: readonly string[] | undefined;

  /**
   * @param kind - which rule failed.
   * @param token - the token that could not be fetched.
   * @param hint - optional text appended after the fixed prefix.
   * @param path - the resolution path that led to `token`, named in the message after the prefix.
   */
  constructor(kind: ParamErrorKind, token: Token, hint?: string, path?: readonly string[]) {
    super(`${prefixes[kind]}: ${nameOf(token)}${resolvingText(path)}${hint ? ` (${hint})` : ''}`);
    this.kind = kind;
    this.token = token;
    this.path = path === undefined ? undefined : Object.freeze([...path]);
  }

  /**
   * @internal `err` again with `path` as its resolution path: the same kind, token and hint,
   * and a message naming the path. `err` itself when its message was changed after it was made.
   */
  static withPath(err: ParamError, path: readonly string[]): ParamError {
    const head = `${prefixes[err.kind]}: ${nameOf(err.token)}${resolvingText(err.path)}`;
    const rest = err.message.slice(head.length); // '' or ' (<hint>)'
    const intact = err.message.startsWith(head) && (rest === '' || (rest.startsWith(' (') && rest.endsWith(')')));
    return intact ? new ParamError(err.kind, err.token, rest === '' ? undefined : rest.slice(2, -1), path) : err;
  }
}

/**
 * A context (or a server) was used after its disposal started. It is also the `reason`
 * of `ctx.signal` (and of every in-flight work aborted) when a context's disposal starts.
 */
export class ContextDisposedError extends Error {
  /**
   * True when `value` is an instance of `ContextDisposedError` or of a subclass, also one made by
   * another copy of polestar-di loaded in the same process (where `instanceof` is false).
   */
  static readonly is = branded(this, 'ContextDisposedError');
  /** Always `'ContextDisposedError'`. */
  override readonly name = 'ContextDisposedError';
  /**
   * @param what - the method or property that was used, e.g. `get(AppConfig)`.
   * @param where - a description of the context, e.g. `context at depth 2`.
   * @param message - a complete message replacing the default one built from `what` and `where`.
   */
  constructor(what: string, where: string, message?: string) {
    super(
      message ??
        `${what} was called on a ${where} that is disposed (or being disposed). ` +
          `Create a new context with parent.child() or server.createContext() instead of keeping a disposed one.`,
    );
  }
}

/**
 * Collected into a disposal's `AggregateError` for each in-flight work (a tool execution,
 * a system run) that was still running when the disposal stopped waiting for it after
 * `new Server({ disposeTimeoutMs })`. The disposal went on without it.
 */
export class DisposeTimeoutError extends Error {
  /**
   * True when `value` is an instance of `DisposeTimeoutError` or of a subclass, also one made by
   * another copy of polestar-di loaded in the same process (where `instanceof` is false).
   */
  static readonly is = branded(this, 'DisposeTimeoutError');
  /** Always `'DisposeTimeoutError'`. */
  override readonly name = 'DisposeTimeoutError';
  /** What was still running, e.g. `tool "refund" (call c1)`. */
  readonly label: string;
  /** The bound that expired, in milliseconds. */
  readonly timeoutMs: number;

  /**
   * @param label - what was still running.
   * @param where - a description of the context whose disposal waited.
   * @param timeoutMs - the bound that expired.
   */
  constructor(label: string, where: string, timeoutMs: number) {
    super(
      `${label} was still running when the disposal of the ${where} stopped waiting for it after ${timeoutMs} ms ` +
        `(new Server({ disposeTimeoutMs })); it was aborted but did not settle. Make it honour its AbortSignal, ` +
        `or raise disposeTimeoutMs.`,
    );
    this.label = label;
    this.timeoutMs = timeoutMs;
  }
}

/** A Server method was called in the wrong phase of its lifecycle. */
export class ServerError extends Error {
  /**
   * True when `value` is an instance of `ServerError` or of a subclass, also one made by
   * another copy of polestar-di loaded in the same process (where `instanceof` is false).
   */
  static readonly is = branded(this, 'ServerError');
  /** `'ServerError'`, or the subclass's name (e.g. `'ServerBuildError'`). */
  override readonly name: string = 'ServerError';
}

/** `server.finish()` failed: a plugin dependency is missing or circular, or a plugin threw. */
export class ServerBuildError extends ServerError {
  /**
   * True when `value` is an instance of `ServerBuildError` or of a subclass, also one made by
   * another copy of polestar-di loaded in the same process (where `instanceof` is false).
   */
  static override readonly is = branded(this, 'ServerBuildError');
  /** Always `'ServerBuildError'`. */
  override readonly name = 'ServerBuildError';
}
