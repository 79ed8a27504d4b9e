/**
 * The close engine of a lifetime: the walk that marks and aborts a subtree, and the drive
 * that closes it, descendants first (newest first), each one's in-flight work, then its
 * finalizers, then its own rest. Both are iterative, so any depth works, and synchronous
 * until the first step that has something to await.
 */
import { closeReason, closeTimeoutError } from './errors.js';
import { CLOSED, CLOSING, OPEN, RESOLVED, RUNNING_QUIET, type LifetimeExtra, type LifetimeNode } from './node.js';
import { settle, settlePending, start, thenRun } from './settle.js';
import { abortWork, allIdle, awaitWorks, giveUpAll, labelOf, type InFlight } from './work.js';
import type { ContextDisposedError } from '../context/errors.js';

interface Frame {
  readonly node: LifetimeNode;
  readonly errors: unknown[];
  /** A descendant closed by the drive (its errors also go to its parent's frame). */
  readonly quiet: boolean;
}

/** The state of one drive: resumable after an await. */
interface Drive {
  /** The frames above the current one. */
  readonly frames: Frame[];
  /** The current frame. */
  f: Frame;
  readonly deadline: number;
}

/** The traversal stack of {@link walk} (empty between walks). */
const walkStack: LifetimeNode[] = [];
/** Empty arrays for {@link walk}'s reached lifetimes (a walk started from an abort listener takes another). */
const reachedPool: LifetimeNode[][] = [];

/** @internal The abort reason of `lt`, built on first use (an `Error` captures a stack: skipped when nothing needs it). */
export function lazyReason(lt: LifetimeNode): () => ContextDisposedError {
  let why: ContextDisposedError | undefined;
  return () => (why ??= closeReason(lt.describe()));
}

/** @internal Whether `lt` has close work of its own (not counting children and the extra record). */
export function hasAnyWork(lt: LifetimeNode): boolean {
  return (lt._fin !== undefined && lt._fin.size > 0) || lt._hasOwnWork();
}

/** @internal The close `close()` memoized as running: the prelude, the walk and the drive; `undefined` when it all ran synchronously. */
export function runClose(lt: LifetimeNode, errors: unknown[], deadline: number): Promise<void> | undefined {
  const x = lt._extra;
  const prelude = x?.prelude;
  if (x !== undefined && prelude !== undefined) {
    x.prelude = undefined;
    if (lt._state === OPEN) walk(lt, false, errors);
    const pending = start(prelude, errors);
    if (pending !== undefined) return thenRun(settlePending(pending, errors), () => walkAndDrive(lt, errors, deadline));
  }
  return walkAndDrive(lt, errors, deadline);
}

/** Marks and aborts the subtree of `lt`, then closes it (see {@link drive}). */
function walkAndDrive(lt: LifetimeNode, errors: unknown[], deadline: number): Promise<void> | undefined {
  walk(lt, true, errors);
  return drive({ frames: [], f: { node: lt, errors, quiet: false }, deadline });
}

/**
 * The synchronous start of a close, iterative at any depth. With `mark`, every open
 * lifetime of the subtree is marked closing; without (a prelude runs first), they stay
 * open. Either way each one not yet reached is aborted: its abort hook, its signal, its
 * in-flight work. Lifetimes already marked were reached by an earlier start.
 */
function walk(root: LifetimeNode, mark: boolean, errors: unknown[]): void {
  // The traversal runs no user code, so it shares one stack (left empty); the aborts
  // after it may start other closes, so `reached` is this walk's own, from a pool.
  const stack = walkStack;
  stack.push(root);
  const reached = reachedPool.pop() ?? [];
  while (stack.length > 0) {
    const n = stack.pop() as LifetimeNode;
    if (n._state !== OPEN) continue;
    if (mark) n._state = CLOSING;
    const x = n._extra;
    if (x !== undefined && !x.aborted) reached.push(n);
    for (let c = n._last; c !== undefined; c = c._prev) stack.push(c);
  }
  if (reached.length > 0) {
    // Every lifetime is marked before any abort runs: an abort listener sees the whole
    // subtree closing. The reason (an Error: a stack capture) is built only when needed.
    const reason = lazyReason(root);
    for (let i = 0; i < reached.length; i++) abortOwn(reached[i] as LifetimeNode, reason, errors);
    // Emptied by popping (`length = 0` is a runtime call on V8); a long list is
    // truncated instead, so the pool never keeps a large backing store.
    if (reached.length > 64) reached.length = 0;
    else while (reached.length > 0) reached.pop();
  }
  if (reachedPool.length < 8) reachedPool.push(reached);
}

/** Aborts what `n` itself holds: its abort hook first, then its signal, then its in-flight work. */
function abortOwn(n: LifetimeNode, reason: () => ContextDisposedError, errors: unknown[]): void {
  const x = n._extra as LifetimeExtra;
  if (x.aborted) return;
  x.aborted = true;
  const hook = x.onAbort;
  if (hook !== undefined) {
    x.onAbort = undefined;
    hook(n);
  }
  x.ac?.abort(reason());
  const works = x.inflight;
  if (works === undefined || works.size === 0) return;
  // aborting may change the set: iterate a copy (none needed for the usual single work)
  if (works.size === 1) {
    abortWork(works.values().next().value as InFlight, reason, errors);
    return;
  }
  for (const w of [...works]) abortWork(w, reason, errors);
}

/**
 * Closes the marked subtree, descendants first (newest first), iteratively: an explicit
 * stack of frames instead of recursion, so any depth works. A descendant whose own close
 * is already running is awaited; every other one is memoized as running here and closed
 * as part of this drive. Synchronous until the first step that has something to await
 * (then it continues from the same frames); `undefined` when it all ran synchronously.
 */
function drive(d: Drive): Promise<void> | undefined {
  for (;;) {
    const f = d.f;
    const c = f.node._last;
    if (c !== undefined) {
      const running = c._closeMemo;
      if (running !== undefined) {
        const waited = settle(() => (typeof running === 'symbol' ? c._closePromise() : running), f.errors);
        return thenRun(waited, () => {
          if (f.node._last === c) unlink(c); // never loop on a child that failed to leave
          return drive(d);
        });
      }
      c._state = CLOSING;
      if (c._extra === undefined && c._last === undefined && !hasAnyWork(c)) {
        c._closeMemo = RESOLVED;
        release(c);
        continue;
      }
      c._closeMemo = RUNNING_QUIET;
      d.frames.push(f);
      const next: Frame = { node: c, errors: [], quiet: true };
      d.f = next;
      const x = c._extra;
      const prelude = x?.prelude;
      if (x !== undefined && prelude !== undefined) {
        x.prelude = undefined;
        const pending = start(prelude, next.errors);
        if (pending !== undefined) return thenRun(settlePending(pending, next.errors), () => drive(d));
      }
      continue;
    }
    const own = closeOwn(f.node, f.errors, d.deadline);
    if (own !== undefined) return thenRun(own, () => (frameDone(d) ? undefined : drive(d)));
    if (frameDone(d)) return undefined;
  }
}

/** The current frame's node is closed: ends it and pops its parent; true when it was the drive's root. */
function frameDone(d: Drive): boolean {
  const f = d.f;
  const parent = d.frames.pop();
  if (parent === undefined) return true;
  for (const e of f.errors) parent.errors.push(e);
  f.node._finishClose(f.errors, f.quiet);
  d.f = parent;
  return false;
}

/**
 * The lifetime's own part of the close: in-flight work, finalizers, the subclass's rest,
 * in that order. Synchronous as far as it can be; `undefined` when it all was.
 */
function closeOwn(lt: LifetimeNode, errors: unknown[], deadline: number): Promise<void> | undefined {
  const x = lt._extra;
  const set = x?.inflight;
  if (x !== undefined && set !== undefined && set.size > 0 && !allIdle(set)) {
    return thenRun(quiesce(lt, x, set, errors, deadline), () => closeFinalizers(lt, errors));
  }
  // nothing running: the works (if any) are given up at once, as after a wait
  if (x !== undefined) {
    x.quiesced = true;
    if (set !== undefined && set.size > 0) giveUpAll(set, errors);
  }
  return closeFinalizers(lt, errors);
}

function closeFinalizers(lt: LifetimeNode, errors: unknown[]): Promise<void> | undefined {
  const draining = lt._fin?.drain(errors);
  if (draining !== undefined) return thenRun(draining, () => closeRestThenRelease(lt, errors));
  return closeRestThenRelease(lt, errors);
}

function closeRestThenRelease(lt: LifetimeNode, errors: unknown[]): Promise<void> | undefined {
  const rest = lt._closeRest(errors);
  if (rest === undefined) {
    release(lt);
    return undefined;
  }
  return rest.then(() => release(lt));
}

/** Awaits the running works (bounded by the deadline), then gives every awaited one up, naming the late ones. */
async function quiesce(lt: LifetimeNode, x: LifetimeExtra, set: ReadonlySet<InFlight>, errors: unknown[], deadline: number): Promise<void> {
  const { seen, late } = await awaitWorks(set, deadline);
  x.quiesced = true;
  if (late.length > 0) {
    const where = lt.describe();
    const ms = lt._closeTimeoutMs();
    for (const w of late) errors.push(closeTimeoutError(labelOf(w), where, ms));
  }
  giveUpAll(seen, errors);
}

/** @internal Ends the close of `lt`: it leaves its parent (unless kept linked), is closed, and drops what it holds. */
export function release(lt: LifetimeNode): void {
  if (!lt._keepLinked) unlink(lt);
  lt._state = CLOSED;
  lt._fin = undefined;
  const x = lt._extra;
  if (x !== undefined) {
    x.inflight = undefined;
    x.prelude = undefined;
    x.quiesced = true;
  }
  lt._released();
}

/** Leaves the parent's child list (or, for a root, whatever lists it). Idempotent. */
function unlink(lt: LifetimeNode): void {
  const p = lt.parent;
  if (p === undefined) {
    lt._detach();
    return;
  }
  const prev = lt._prev;
  const next = lt._next;
  if (next !== undefined) next._prev = prev;
  else if (p._last === lt) p._last = prev;
  if (prev !== undefined) prev._next = next;
  lt._prev = undefined;
  lt._next = undefined;
}
