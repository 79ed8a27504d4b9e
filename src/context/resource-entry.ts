/**
 * One stored resource (a local or a global) with its borrow state.
 */
import type { SystemContext } from './system-context.js';
import type { QueueItem } from '../system/borrows.js';

/** @internal A stored resource value and the borrows currently held on it. */
export class ResourceEntry {
  /** Number of read borrows held (by running systems' `Res` parameters). */
  reads = 0;
  /** Whether a write borrow is held (by a running system's `ResMut` parameter). */
  writing = false;
  /**
   * Whether the value implemented `Symbol.asyncDispose` / `Symbol.dispose` when it was
   * stored as a local: it then counts as one holder in `server._holders` (the last
   * context holding it disposes it).
   */
  counted = false;
  /** The FIFO of waiting-borrow acquirers, made on first use; `undefined` when none wait. */
  queue: QueueItem[] | undefined = undefined;

  /**
   * @param value - the stored value.
   * @param owner - the context holding it as a local; `undefined` for a global.
   * @param view - for a contextual global: makes the value seen from one context.
   */
  constructor(
    public value: unknown,
    public readonly owner: SystemContext | undefined,
    public readonly view?: (ctx: SystemContext) => unknown,
  ) {}
}
