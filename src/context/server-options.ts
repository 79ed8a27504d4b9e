/**
 * `new Server(options)`: validated once, then frozen and readable as `server.options`.
 */
import type { Logger } from '../observability/logger.js';
import { describeValue, errorText } from './token.js';

/** How a system's borrows behave when an entry is already borrowed (see {@link ServerOptions.borrows}). */
export type BorrowMode = 'fail' | 'wait';

/** Options of `new Server(options)`. Every field is optional. */
export interface ServerOptions {
  /**
   * How long a context's disposal waits for the in-flight work it aborted (tool
   * executions, system runs) before going on without it, in milliseconds. Default
   * `10_000`. `0` does not wait at all. Work still running at the bound is named in the
   * disposal's `AggregateError` (a `DisposeTimeoutError` each).
   */
  readonly disposeTimeoutMs?: number;
  /**
   * The server-wide borrow rule: `'fail'` (default: a conflicting fetch fails at
   * once with `BorrowConflict`) or `'wait'` (a run waits, FIFO, until every borrow
   * it needs can be granted, up to `borrowTimeoutMs`).
   */
  readonly borrows?: BorrowMode;
  /** How long a waiting borrow waits before failing with `BorrowConflict`, in milliseconds. Default `30_000`. */
  readonly borrowTimeoutMs?: number;
  /**
   * Where the server reports what it contains rather than throws (a listener that threw,
   * a failing `tools/result` observer, an instrumentation's own error): an object with
   * `warn(message, data?)` and `error(message, data?)` methods. Default: the console;
   * polestar writes to the console nowhere else. A logger without either method is a
   * `TypeError` naming it.
   */
  readonly logger?: Logger;
}

/** `server.options`: every option with its default filled in (the logger is not one of them: it is the server's own). */
export type ResolvedServerOptions = Readonly<Required<Omit<ServerOptions, 'logger'>>>;

/** The largest delay `setTimeout` honours (about 24.8 days); longer ones fire at once. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

const DEFAULTS: ResolvedServerOptions = Object.freeze({
  disposeTimeoutMs: 10_000,
  borrows: 'fail',
  borrowTimeoutMs: 30_000,
});

const KNOWN = [...Object.keys(DEFAULTS), 'logger'];

/** @internal Validates `new Server(options)`; reads each field once; returns a frozen copy with defaults. */
export function resolveServerOptions(options: unknown): ResolvedServerOptions {
  if (options === undefined) return DEFAULTS;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`new Server(options): options must be an object such as { disposeTimeoutMs: 5_000 }, got ${describeValue(options)}.`);
  }
  let keys: string[];
  let disposeTimeoutMs: unknown;
  let borrows: unknown;
  let borrowTimeoutMs: unknown;
  try {
    keys = Object.keys(options);
    ({ disposeTimeoutMs, borrows, borrowTimeoutMs } = options as ServerOptions);
  } catch (err) {
    throw new TypeError(`new Server(options): reading the options threw (${errorText(err)}); pass a plain object.`, { cause: err });
  }
  for (const k of keys) {
    if (!KNOWN.includes(k)) {
      throw new TypeError(
        `new Server(options): unknown option ${JSON.stringify(k)}; the options are ${KNOWN.join(', ')}.` +
          closest(k),
      );
    }
  }
  return Object.freeze({
    disposeTimeoutMs: timeout('disposeTimeoutMs', disposeTimeoutMs, DEFAULTS.disposeTimeoutMs),
    borrows: borrowMode(borrows),
    borrowTimeoutMs: timeout('borrowTimeoutMs', borrowTimeoutMs, DEFAULTS.borrowTimeoutMs),
  });
}

function timeout(name: string, v: unknown, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || Number.isNaN(v)) {
    throw new TypeError(`new Server({ ${name} }): ${name} must be a number of milliseconds, got ${describeValue(v)}.`);
  }
  if (v < 0 || v > MAX_TIMEOUT_MS) {
    throw new RangeError(`new Server({ ${name} }): ${name} must be between 0 and ${MAX_TIMEOUT_MS} ms (the longest delay a timer honours), got ${v}.`);
  }
  return v;
}

function borrowMode(v: unknown): BorrowMode {
  if (v === undefined) return DEFAULTS.borrows;
  if (v === 'fail' || v === 'wait') return v;
  throw new TypeError(`new Server({ borrows }): borrows must be 'fail' or 'wait', got ${describeValue(v)}.`);
}

function closest(k: string): string {
  const lower = k.toLowerCase();
  const hit = KNOWN.find((known) => {
    const kl = known.toLowerCase();
    return kl.startsWith(lower) || lower.startsWith(kl) || kl.includes(lower) || lower.includes(kl.replace(/ms$/, ''));
  });
  return hit === undefined ? '' : ` Did you mean ${JSON.stringify(hit)}?`;
}
