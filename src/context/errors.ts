/**
 * The errors of the context tree. Every message names the token, the context and the fix.
 */
import { nameOf, type Token } from './token.js';

/** What a {@link ParamError} is about. */
export type ParamErrorKind = 'ResourceNotFound' | 'BorrowConflict' | 'OutputNotFound';

const prefixes: Record<ParamErrorKind, string> = {
  ResourceNotFound: 'resource not found',
  BorrowConflict: 'borrow conflict',
  OutputNotFound: 'output not found',
};

/**
 * A resource or output could not be fetched. The message begins exactly
 * `resource not found: <Name>`, `borrow conflict: <Name>` or `output not found: <Name>`,
 * and may add a hint after.
 */
export class ParamError extends Error {
  /** Always `'ParamError'`; check {@link ParamError.kind} for which rule failed. */
  override readonly name = 'ParamError';
  /** Which rule failed. */
  readonly kind: ParamErrorKind;
  /** The token that could not be fetched. */
  readonly token: Token;

  /**
   * @param kind - which rule failed.
   * @param token - the token that could not be fetched.
   * @param hint - optional text appended after the fixed prefix.
   */
  constructor(kind: ParamErrorKind, token: Token, hint?: string) {
    super(`${prefixes[kind]}: ${nameOf(token)}${hint ? ` (${hint})` : ''}`);
    this.kind = kind;
    this.token = token;
  }
}

/** A context (or a server) was used after its disposal started. */
export class ContextDisposedError extends Error {
  /** Always `'ContextDisposedError'`. */
  override readonly name = 'ContextDisposedError';
  /**
   * @param what - the method or property that was used, e.g. `get(AppConfig)`.
   * @param where - a description of the context, e.g. `context at depth 2`.
   */
  constructor(what: string, where: string) {
    super(
      `${what} was called on a ${where} that is disposed (or being disposed). ` +
        `Create a new context with parent.child() or server.createContext() instead of keeping a disposed one.`,
    );
  }
}

/** A Server method was called in the wrong phase of its lifecycle. */
export class ServerError extends Error {
  /** `'ServerError'`, or the subclass's name (e.g. `'ServerBuildError'`). */
  override readonly name: string = 'ServerError';
}

/** `server.finish()` failed: a plugin dependency is missing or circular, or a plugin threw. */
export class ServerBuildError extends ServerError {
  /** Always `'ServerBuildError'`. */
  override readonly name = 'ServerBuildError';
}
