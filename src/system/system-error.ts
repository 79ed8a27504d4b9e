/**
 * SystemError: a system run failed, either fetching a parameter or inside its body.
 */
import { describeValue } from '../context/token.js';
import { branded } from '../util/brand.js';

/** Why a system run failed. */
export type SystemErrorKind = 'ParamError' | 'ExecutionError';

const prefixes: Record<SystemErrorKind, string> = {
  ParamError: 'parameter error',
  ExecutionError: 'execution error',
};

/**
 * A system run failed. `kind: 'ParamError'` (message begins `parameter error: `): a
 * parameter could not be fetched, `cause` is the `ParamError`. `kind: 'ExecutionError'`
 * (message begins `execution error: `): the body threw or rejected (also with a
 * non-Error value, kept as `cause`), or a `loop` / its `until` failed.
 */
export class SystemError extends Error {
  /**
   * True when `value` is an instance of `SystemError` or of a subclass, also one made by
   * another copy of polestar-di loaded in the same process (where `instanceof` is false).
   */
  static readonly is = branded(this, 'SystemError');
  /** Always `'SystemError'`; check {@link SystemError.kind} for the phase that failed. */
  override readonly name = 'SystemError';
  /** Which phase failed. */
  readonly kind: SystemErrorKind;
  /** The name of the system (or `loop` step) that failed. */
  readonly systemName: string;

  /**
   * @param kind - which phase failed.
   * @param systemName - the system's name.
   * @param cause - the underlying error or thrown value, if any.
   * @param detail - text used instead of the cause's message.
   * @param label - how the failed work reads in the message, such as `system "summarize"`
   *   or `tool "refund" (call c1)`: the message then reads `<phase>: <label> → <detail>`
   *   instead of `<phase>: <systemName>: <detail>`.
   */
  constructor(kind: SystemErrorKind, systemName: string, cause?: unknown, detail?: string, label?: string) {
    const text = detail ?? causeText(cause);
    super(label === undefined ? `${prefixes[kind]}: ${systemName}: ${text}` : `${prefixes[kind]}: ${label} → ${text}`, cause === undefined ? undefined : { cause });
    this.kind = kind;
    this.systemName = systemName;
  }
}

function causeText(cause: unknown): string {
  if (cause instanceof Error) return cause.message;
  return `threw a non-Error value: ${describeValue(cause)}`;
}
