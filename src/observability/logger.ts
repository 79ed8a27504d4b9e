/**
 * The logger seam: `new Server({ logger })`. Everything polestar reports without failing
 * a call (a listener that threw, an observer that failed, an instrumentation's own error)
 * goes to the server's logger; polestar writes to the console nowhere else.
 */
import { describeValue } from '../util/describe-value.js';
import { readField } from '../util/read-field.js';

/**
 * Where a server reports what it contains rather than throws: a failing event listener,
 * a `tools/result` observer that threw, an instrumentation's own error. Give one to
 * `new Server({ logger })`; the default is the console. pino, winston, bunyan and the
 * console all fit (`warn` and `error` are called as methods, with the logger as `this`).
 *
 * A logger that throws is ignored: reporting never breaks the call that reports.
 *
 * @example
 * ```ts
 * import pino from 'pino';
 * const log = pino();
 * const server = new Server({
 *   logger: { warn: (message, data) => log.warn({ data }, message), error: (message, data) => log.error({ data }, message) },
 * });
 * ```
 */
export interface Logger {
  /** Something failed and was contained (a listener that threw): the call it happened in went on. */
  warn(message: string, data?: unknown): void;
  /** Something failed that polestar could not recover from on its own. */
  error(message: string, data?: unknown): void;
}

/** @internal The default logger: the console (referenced here only; polestar writes to it through the `Logger` calls). */
export const DEFAULT_LOGGER: Logger = console;

/**
 * @internal Reads and validates `options.logger` of `new Server(options)` (read once):
 * `undefined` is the console; anything else must be an object with `warn` and `error`
 * methods, else a `TypeError` naming the missing one.
 */
export function resolveLogger(options: unknown): Logger {
  if (options === undefined || options === null || typeof options !== 'object') return DEFAULT_LOGGER;
  const logger = readField(options, 'logger', 'new Server({ logger })', 'options', 'pass a plain object.');
  if (logger === undefined) return DEFAULT_LOGGER;
  return checkLogger(logger, 'new Server({ logger })');
}

/**
 * @internal Checks a logger given to `where` (`new Server({ logger })`, the OpenTelemetry
 * bridge's options): an object (or function) with `warn` and `error` methods, else a
 * `TypeError` naming `where` and the missing method.
 */
export function checkLogger(logger: unknown, where: string): Logger {
  if (logger === null || (typeof logger !== 'object' && typeof logger !== 'function')) {
    throw new TypeError(`${where}: logger must be an object with warn(message, data?) and error(message, data?) methods (the console fits), got ${describeValue(logger)}.`);
  }
  for (const method of ['warn', 'error'] as const) {
    const fn = readField(logger, method, where, 'logger', 'pass a logger whose warn and error are plain methods.');
    if (typeof fn !== 'function') {
      throw new TypeError(
        `${where}: logger has no ${method}(message, data?) method (got ${describeValue(fn)}); a logger needs both warn and error. ` +
          `Wrap your logger: { warn: (m, d) => log.warn(m, d), error: (m, d) => log.error(m, d) }.`,
      );
    }
  }
  return logger as Logger;
}

/**
 * @internal Calls `logger[level](message, data)` as a method; a logger that throws (or
 * lost the method since) is ignored: reporting never breaks the caller.
 */
export function log(logger: Logger, level: 'warn' | 'error', message: string, data?: unknown): void {
  try {
    if (data === undefined) logger[level](message);
    else logger[level](message, data);
  } catch {
    // a throwing logger has nowhere left to report to
  }
}
