/**
 * SystemContext: one node of the context tree (server → agent → session → turn).
 *
 * A context is deliberately small: a parent pointer, its own local store, outputs, an
 * ownership stack, an inherited scope tag, and (only when class-based resolution needs
 * it) an inversify container. Lookups never touch inversify unless the token is only
 * known to inversify.
 */
import { ContextDisposedError, ParamError } from './errors.js';
import { assertMayBeLocal, assertMayBeMutated, roleOf } from './markers.js';
import { Outputs } from './outputs.js';
import { providerOf } from './provider-hints.js';
import { ResourceEntry } from './resource-entry.js';
import { assertToken, describeValue, isToken, nameOf, tokenOfValue, type Token } from './token.js';
import { disposeValue, isDisposable, Ownership, settle, throwCollected, type Cleanup } from '../disposal/ownership.js';
import type { Server } from './server.js';
import type { AnySystem, SystemFn } from '../system/system.js';
import type { Step } from '../execution/steps.js';
import type { ExecutionResult } from '../execution/execution-result.js';
import { runOn } from '../system/run.js';
import { executeOn } from '../execution/execute.js';
import { resolveIn, resolveInAsync } from '../container/resolve.js';
import type { Container } from 'inversify';
import type { ownClass } from '../system/own-class.js';

const LIVE = 0;
const DISPOSED = 1;

/**
 * One context of the tree. Made by `server.createContext()` (a root) or `ctx.child()`.
 *
 * - `get` (the `Res` rule): own locals, then each ancestor's locals nearest first, then
 *   the globals (values inserted with `insertGlobal`, then classes bound in
 *   `server.container`).
 * - `getMut` (the `ResMut` rule): own locals only, never walking up.
 */
export class SystemContext implements AsyncDisposable {
  /** Type-level brand of polestar's own classes: `Res<T>` hands this class over as itself (never present at run time). */
  declare readonly [ownClass]: true;
  /** The server this context belongs to. */
  readonly server: Server;
  /** The parent context; `undefined` for a root context. */
  readonly parent: SystemContext | undefined;
  /** 0 for a root context, parent's depth + 1 otherwise. */
  readonly depth: number;
  /** @internal The nearest scope tag (see `createScope`), inherited at creation. */
  readonly _scopeKey: object | undefined;
  /** @internal Own locals. */
  _locals: Map<Token, ResourceEntry> | undefined;
  /** @internal Live children, oldest first. */
  _children: Set<SystemContext> | undefined;
  /** @internal Cached per-context views of contextual globals. */
  _views: Map<Token, unknown> | undefined;
  /** @internal The lazily made inversify container of this context. */
  _container: Container | undefined;
  /** @internal 0 live, 1 disposing or disposed. */
  _state = LIVE;
  /**
   * @internal The first step of this context's disposal, run once before its children
   * are disposed: how a scope owner such as an agent leaves its registry and announces
   * its end, whichever path disposes the context. When the context's own `dispose()`
   * starts the disposal it runs while the context is still live; when an ancestor's
   * disposal reaches it, the subtree was already marked disposed. A rejection is
   * collected with the other disposal errors.
   */
  _prelude: Cleanup | undefined;
  /** @internal Set once a disposable value was stored as a local (sticky; lets dispose skip a scan). */
  _mayOwn = false;
  #outputs: Outputs | undefined;
  #cleanups: Ownership | undefined;
  #disposal: Promise<void> | undefined;

  /** @internal Use `server.createContext()` or `ctx.child()`. */
  constructor(server: Server, parent: SystemContext | undefined, scopeKey: object | undefined) {
    this.server = server;
    this.parent = parent;
    this.depth = parent === undefined ? 0 : parent.depth + 1;
    this._scopeKey = scopeKey;
  }

  /** True once disposal has started. */
  get isDisposed(): boolean {
    return this._state !== LIVE;
  }

  /** @internal Throws ContextDisposedError when disposal has started. */
  _live(what: string): void {
    if (this._state !== LIVE) throw new ContextDisposedError(what, this.describe());
  }

  /** @internal A short description for messages, e.g. `context at depth 2 (scope researcher)`. */
  describe(): string {
    return `context at depth ${this.depth}${this._scopeKey ? ` (${scopeLabel(this._scopeKey)})` : ''}`;
  }

  /** A new child context: no locals, no outputs, the same globals, owned by this one. */
  child(): SystemContext {
    this._live('child()');
    return this._adopt(new SystemContext(this.server, this, this._scopeKey));
  }

  /** @internal Registers `c` as a live child owned by this context. */
  _adopt(c: SystemContext): SystemContext {
    (this._children ??= new Set()).add(c);
    return c;
  }

  // ---------------------------------------------------------------- locals

  /**
   * Sets a local of this context (token = `value.constructor`), returning the previous
   * local of that token. A local shadows the same token in every ancestor and in the
   * globals, for this context and its descendants.
   */
  insert<T extends object>(value: T): T | undefined;
  /** Sets a local of this context under an explicit token, returning the previous one. */
  insert<T>(token: Token<T>, value: NoInfer<T>): T | undefined;
  insert(a: unknown, b?: unknown): unknown {
    if (this._state !== LIVE) this._live('insert()');
    let t: Token;
    let value: unknown;
    if (arguments.length < 2) {
      t = tokenOfValue(a, `insert(value) on a ${this.describe()}`, 'ctx.insert(MY_TOKEN, value)');
      value = a;
    } else {
      if (!isToken(a)) assertToken(a, 'insert(token, value)');
      t = a;
      value = b;
    }
    if (roleOf(t) === 'global') assertMayBeLocal(t, `insert(${nameOf(t)})`);
    if (value === undefined) {
      throw new TypeError(`insert(${nameOf(t)}, undefined): a local can not be undefined; use ctx.remove(${nameOf(t)}) to drop one.`);
    }
    return this._setLocal(t, value);
  }

  /** @internal Sets a local without validation. */
  _setLocal(t: Token, value: unknown): unknown {
    const locals = (this._locals ??= new Map());
    const prev = locals.get(t);
    if (prev !== undefined) {
      if (prev.reads > 0 || prev.writing) {
        throw new ParamError('BorrowConflict', t, `insert() on a ${this.describe()} while a running system borrows the current value`);
      }
      locals.delete(t);
    }
    locals.set(t, new ResourceEntry(value, this));
    if (!this._mayOwn && isDisposable(value)) this._mayOwn = true;
    return prev?.value;
  }

  /** Removes and returns an own local of this context; `undefined` when it has none. */
  remove<T>(token: Token<T>): T | undefined {
    this._live('remove()');
    const locals = this._locals;
    const e = locals?.get(token);
    if (locals === undefined || e === undefined) {
      assertToken(token, 'remove(token)');
      return undefined;
    }
    if (e.reads > 0 || e.writing) {
      throw new ParamError('BorrowConflict', token, `remove() on a ${this.describe()} while a running system borrows it`);
    }
    locals.delete(token);
    return e.value as T;
  }

  /** Whether this context has its own local of `token` (ancestors are not consulted). */
  hasLocal(token: Token): boolean {
    this._live('hasLocal()');
    if (this._locals?.has(token)) return true;
    assertToken(token, 'hasLocal(token)');
    return false;
  }

  /** Whether `get(token)` would find something (locals up the tree, then globals). */
  has(token: Token): boolean {
    this._live('has()');
    if (this._findEntry(token) !== undefined) return true;
    assertToken(token, 'has(token)');
    return this.server._containerHas(token);
  }

  // ---------------------------------------------------------------- lookups

  /** @internal The entry `Res` resolves to among locals and inserted globals. */
  _findEntry(t: Token): ResourceEntry | undefined {
    const own = this._locals?.get(t);
    if (own !== undefined) return own;
    for (let c = this.parent; c !== undefined; c = c.parent) {
      const e = c._locals?.get(t);
      if (e !== undefined) return e;
    }
    return this.server._globals.get(t);
  }

  /** @internal The value of an entry as seen from this context. */
  _valueOf(e: ResourceEntry, t: Token): unknown {
    if (e.view === undefined) return e.value;
    const views = (this._views ??= new Map());
    let v = views.get(t);
    if (v === undefined) {
      v = e.view(this);
      views.set(t, v);
    }
    return v;
  }

  /**
   * The `Res` rule: the first match in own locals, then each ancestor's locals nearest
   * first, then the globals. Throws `ParamError` (`ResourceNotFound`, or
   * `BorrowConflict` while a running system holds `ResMut` on the entry).
   */
  get<T>(token: Token<T>): T {
    if (this._state !== LIVE) this._live(`get(${safeName(token)})`);
    const e = this._findEntry(token);
    if (e !== undefined) {
      if (e.writing) throw readConflict(token, this);
      return (e.view === undefined ? e.value : this._valueOf(e, token)) as T;
    }
    assertToken(token, 'get(token)');
    if (this.server._containerHas(token)) return this.server._containerGet(token) as T;
    throw new ParamError('ResourceNotFound', token, notFoundHint(token, this));
  }

  /** Like {@link SystemContext.get} but `undefined` when the token is not found. */
  tryGet<T>(token: Token<T>): T | undefined {
    if (this._state !== LIVE) this._live(`tryGet(${safeName(token)})`);
    const e = this._findEntry(token);
    if (e !== undefined) {
      if (e.writing) throw readConflict(token, this);
      return (e.view === undefined ? e.value : this._valueOf(e, token)) as T;
    }
    assertToken(token, 'tryGet(token)');
    if (this.server._containerHas(token)) return this.server._containerGet(token) as T;
    return undefined;
  }

  /**
   * The `ResMut` rule: this context's own locals only. A token held only by an ancestor
   * or as a global is still `ResourceNotFound`, with a hint saying where it was found.
   */
  getMut<T>(token: Token<T>): T {
    if (this._state !== LIVE) this._live(`getMut(${safeName(token)})`);
    const e = this._locals?.get(token);
    if (e !== undefined) {
      if (e.writing || e.reads > 0) throw writeConflict(token, this, e);
      return e.value as T;
    }
    throw this._mutMiss(token, 'getMut');
  }

  /** @internal The error for a `ResMut` miss (marker rule first, then where it was found). */
  _mutMiss(token: Token, call: string): Error {
    assertToken(token, `${call}(token)`);
    mutMarkerCheck(token, call);
    return new ParamError('ResourceNotFound', token, mutHint(token, this));
  }

  // ---------------------------------------------------------------- outputs, running

  /** This context's outputs; never inherited. */
  get outputs(): Outputs {
    this._live('outputs');
    return (this.#outputs ??= new Outputs((what) => this._live(what)));
  }

  /** Fetches the system's parameters from this context, runs it, stores and returns its output. */
  run<R>(system: SystemFn<R> | AnySystem<R>): Promise<Awaited<R>> {
    return runOn(this, system) as Promise<Awaited<R>>;
  }

  /** Runs steps (systems, `parallel`, `loop`) in order; resolves to an `ExecutionResult`. */
  execute(steps: readonly Step[]): Promise<ExecutionResult> {
    return executeOn(this, steps);
  }

  /** Constructs an `@injectable()` class through this context's inversify scope. */
  resolve<T>(cls: new (...args: any[]) => T): T {
    this._live('resolve()');
    return resolveIn(this, cls);
  }

  /** Like {@link SystemContext.resolve}, for classes with async activation. */
  resolveAsync<T>(cls: new (...args: any[]) => T): Promise<T> {
    return this._state === LIVE ? resolveInAsync(this, cls) : Promise.reject(new ContextDisposedError('resolveAsync()', this.describe()));
  }

  // ---------------------------------------------------------------- disposal

  /**
   * Registers cleanup run when this context is disposed (last registered runs first).
   * Returns a function that unregisters it.
   */
  onDispose(fn: Cleanup): () => void {
    this._live('onDispose()');
    if (typeof fn !== 'function') throw new TypeError(`onDispose(fn) needs a function, got ${describeValue(fn)}.`);
    return (this.#cleanups ??= new Ownership()).add(fn);
  }

  /**
   * Disposes descendants first (newest first), then runs this context's cleanups (last
   * registered first), then disposes its locals that implement `Symbol.asyncDispose` /
   * `Symbol.dispose` (newest first). Memoized; errors are collected into one
   * `AggregateError` after all ran.
   */
  dispose(): Promise<void> {
    if (this.#disposal === undefined) {
      const prelude = this._prelude;
      if (prelude !== undefined) {
        this._prelude = undefined;
        return (this.#disposal = this.#disposeAfter(prelude));
      }
      this._markTree();
      this.#disposal = this.#hasDisposalWork() ? this.#runDispose() : this.#finishDispose();
    }
    return this.#disposal;
  }

  /** Same as {@link SystemContext.dispose}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }

  /** @internal Marks this subtree disposed synchronously, before any async work. */
  _markTree(): void {
    if (this._state !== LIVE) return;
    this._state = DISPOSED;
    const kids = this._children;
    if (kids !== undefined) for (const c of kids) c._markTree();
  }

  /** Whether disposal has anything to run or await (children, cleanups, disposable locals, a container). */
  #hasDisposalWork(): boolean {
    if (this._children !== undefined && this._children.size > 0) return true;
    if (this.#cleanups !== undefined && this.#cleanups.size > 0) return true;
    if (this._container !== undefined) return true;
    return this._mayOwn && this._locals !== undefined && this._locals.size > 0;
  }

  /** The fast path: nothing to await, so release the state and share one resolved promise. */
  #finishDispose(): Promise<void> {
    this.#release();
    return RESOLVED;
  }

  #release(): void {
    this._locals = undefined;
    this._views = undefined;
    this.#outputs = undefined;
    this.#cleanups = undefined;
    if (this.parent !== undefined) this.parent._children?.delete(this);
    else this.server._forget(this);
  }

  /** Runs the prelude while this context is still live (unless an ancestor already marked it), then disposes. */
  async #disposeAfter(prelude: Cleanup): Promise<void> {
    const errors: unknown[] = [];
    await settle(prelude, errors);
    this._markTree();
    await this.#runDispose(errors);
  }

  async #runDispose(errors: unknown[] = []): Promise<void> {
    const kids = this._children;
    if (kids !== undefined && kids.size > 0) {
      const list = [...kids];
      for (let i = list.length - 1; i >= 0; i--) await settle(() => list[i].dispose(), errors);
    }
    if (this.#cleanups !== undefined) await this.#cleanups.drain(errors);
    const owned = this.#ownedDisposables();
    for (let i = owned.length - 1; i >= 0; i--) {
      const v = owned[i];
      await settle(() => disposeValue(v), errors);
    }
    const cont = this._container;
    this._container = undefined;
    if (cont !== undefined) await settle(() => cont.unbindAllAsync(), errors);
    this.#release();
    throwCollected(errors, this.describe());
  }

  /**
   * The disposable values this context owns, oldest first: its own locals implementing
   * `Symbol.asyncDispose` / `Symbol.dispose`, each object once, skipping any object that
   * an ancestor holds as a local or the server holds as a global, inserted or made by
   * `server.container` (the same object re-inserted here is borrowed, not owned: its
   * owner disposes it).
   */
  #ownedDisposables(): (AsyncDisposable | Disposable)[] {
    const owned: (AsyncDisposable | Disposable)[] = [];
    const locals = this._locals;
    if (locals === undefined) return owned;
    for (const e of locals.values()) {
      const v = e.value;
      if (!isDisposable(v) || owned.includes(v) || this.#heldAbove(v)) continue;
      owned.push(v);
    }
    return owned;
  }

  #heldAbove(v: unknown): boolean {
    for (let c = this.parent; c !== undefined; c = c.parent) {
      const ls = c._locals;
      if (ls !== undefined) for (const e of ls.values()) if (e.value === v) return true;
    }
    for (const e of this.server._globals.values()) if (e.value === v) return true;
    return this.server._containerValues.has(v as object);
  }
}

const RESOLVED: Promise<void> = Promise.resolve();

function safeName(t: unknown): string {
  return typeof t === 'function' || typeof t === 'symbol' ? nameOf(t as Token) : String(t);
}

/**
 * How a scope key reads in messages: its own `toString()` when its class defines one
 * (an `Agent` reads `agent "researcher"`), else `scope <id | name | class name>`.
 */
function scopeLabel(key: object): string {
  const own = (key as { toString?: unknown }).toString;
  if (typeof own === 'function' && own !== Object.prototype.toString && own !== Function.prototype.toString) {
    try {
      return String(key);
    } catch {
      // fall through to the structural label
    }
  }
  const id = (key as { id?: unknown }).id;
  if (typeof id === 'string') return `scope ${id}`;
  const n = (key as { name?: unknown }).name;
  if (typeof n === 'string' && n) return `scope ${n}`;
  return `scope ${(key.constructor as { name?: string } | undefined)?.name ?? 'object'}`;
}

function readConflict(t: Token, ctx: SystemContext): ParamError {
  return new ParamError(
    'BorrowConflict',
    t,
    `a running system holds ResMut<${nameOf(t)}> seen from this ${ctx.describe()}; Res can not read it until that system settles`,
  );
}

function writeConflict(t: Token, ctx: SystemContext, e: ResourceEntry): ParamError {
  const held = e.writing ? `a running system holds ResMut<${nameOf(t)}>` : `${e.reads} running system(s) hold Res<${nameOf(t)}>`;
  return new ParamError('BorrowConflict', t, `${held} on this ${ctx.describe()}; ResMut needs it unborrowed`);
}

/** The marker rule, checked on a miss only: a global-marked class is never a local. */
function mutMarkerCheck(t: Token, call: string): void {
  assertMayBeMutated(t, `${call}(${nameOf(t)})`);
}

function mutHint(t: Token, ctx: SystemContext): string {
  let c = ctx.parent;
  while (c !== undefined) {
    if (c._locals?.has(t)) {
      return `found in an ancestor ${c.describe()}, but ResMut never walks up: it only sees the locals of this ${ctx.describe()}; ` +
        `insert one here with ctx.insert(...), read it with Res / ctx.get, or run the system on the context that owns it`;
    }
    c = c.parent;
  }
  if (ctx.server._globals.has(t) || ctx.server._containerHas(t)) {
    return `found as a global, but ResMut never walks up to globals: globals are read-only through contexts; ` +
      `read it with Res / ctx.get, or insert a local copy into this ${ctx.describe()}`;
  }
  return `not in the locals of this ${ctx.describe()}; ResMut never walks up. Insert it with ctx.insert(...) first`;
}

function notFoundHint(t: Token, ctx: SystemContext): string {
  return `looked in the locals of this ${ctx.describe()}, its ${ctx.depth} ancestor(s) and the globals; ` +
    (providerOf(t) ?? `insert it with ctx.insert(...), server.insertGlobal(...), server.registerLocal(...), or bind it in server.container`);
}
