/**
 * The calls in flight of one context: one {@link CallGroup} per
 * context that has had a call made through it or of a tool it registered, tracked once
 * with `ctx.group(CALLS)`. Its disposal aborts every member and awaits the group
 * (bounded by `disposeTimeoutMs`). Members are linked into the group intrusively, so a
 * call joins and leaves with a few field writes: no `Set`, no per-call closure.
 */
import type { InFlight } from '../lifetime/work.js';

const RESOLVED: Promise<void> = Promise.resolve();

/**
 * @internal What a group uses of a call in flight (a tool call's state): its links into
 * the group of the calling context (`g1`, `p1`, `n1`) and into the group of the context
 * owning the tool's registration (`g2`, `p2`, `n2`), its label, the registration it calls,
 * and its abort.
 */
export interface GroupMember {
  g1: CallGroup | undefined;
  p1: GroupMember | undefined;
  n1: GroupMember | undefined;
  g2: CallGroup | undefined;
  p2: GroupMember | undefined;
  n2: GroupMember | undefined;
  /** For disposal messages: `tool "x" (call c1)`. */
  readonly label: string;
  /** The registration being called (`undefined` once the call is over or when none was found). */
  readonly registration: object | undefined;
  /** Aborts the call with `reason` (the first abort wins). */
  abort(reason: unknown): void;
}

/** @internal The in-flight calls of one context, as one tracked work. */
export class CallGroup implements InFlight {
  /** Calls made through this context (linked through `p1` / `n1`). */
  h1: GroupMember | undefined = undefined;
  /** Calls of tools this context registered, made through another context (`p2` / `n2`). */
  h2: GroupMember | undefined = undefined;
  /** Members not yet over. */
  count = 0;
  /** The disposal of the context started: later members are aborted as they join. */
  aborted = false;
  /** The reason of that abort (built on first use). */
  reason: (() => unknown) | undefined = undefined;
  #waiters: (() => void)[] | undefined = undefined;

  /** The members' labels, e.g. `tool "x" (call c1), tool "y" (call c2)`. */
  get label(): string {
    const out: string[] = [];
    for (const c of this.members()) out.push(c.label);
    return out.length === 0 ? 'tool calls' : out.join(', ');
  }

  /** Aborts every member (the disposal of the context or an ancestor started). */
  abort(reason: () => unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    if (this.count === 0) return;
    const why = reason();
    for (const c of this.members()) c.abort(why);
  }

  /** Aborts the members calling through `registration` (it was undone). */
  abortRegistration(registration: object, reason: unknown): void {
    for (const c of this.members()) if (c.registration === registration) c.abort(reason);
  }

  /** No member is running. */
  get idle(): boolean {
    return this.count === 0;
  }

  /** Settles when no member is left. Never rejects. */
  get settled(): Promise<unknown> {
    if (this.count === 0) return RESOLVED;
    return new Promise<void>((resolve) => (this.#waiters ??= []).push(resolve));
  }

  /** Nothing to release: a call holds no borrows of its own (a tool system tracks its own). */
  giveUp(): void {}

  /** A snapshot of the members (an abort may make a member leave while we iterate). */
  members(): GroupMember[] {
    const out: GroupMember[] = [];
    for (let c = this.h1; c !== undefined; c = c.n1) out.push(c);
    for (let c = this.h2; c !== undefined; c = c.n2) out.push(c);
    return out;
  }

  /** Adds a call made through this context. */
  join1(c: GroupMember): void {
    c.g1 = this;
    c.n1 = this.h1;
    if (this.h1 !== undefined) this.h1.p1 = c;
    this.h1 = c;
    this.count++;
    if (this.aborted) c.abort((this.reason as () => unknown)());
  }

  /** Adds a call of a tool this context registered. */
  join2(c: GroupMember): void {
    c.g2 = this;
    c.n2 = this.h2;
    if (this.h2 !== undefined) this.h2.p2 = c;
    this.h2 = c;
    this.count++;
    if (this.aborted) c.abort((this.reason as () => unknown)());
  }

  /** Removes a call added with {@link CallGroup.join1}. */
  leave1(c: GroupMember): void {
    if (c.p1 !== undefined) c.p1.n1 = c.n1;
    else this.h1 = c.n1;
    if (c.n1 !== undefined) c.n1.p1 = c.p1;
    c.p1 = c.n1 = c.g1 = undefined;
    this.#left();
  }

  /** Removes a call added with {@link CallGroup.join2}. */
  leave2(c: GroupMember): void {
    if (c.p2 !== undefined) c.p2.n2 = c.n2;
    else this.h2 = c.n2;
    if (c.n2 !== undefined) c.n2.p2 = c.p2;
    c.p2 = c.n2 = c.g2 = undefined;
    this.#left();
  }

  #left(): void {
    if (--this.count > 0) return;
    const ws = this.#waiters;
    if (ws === undefined) return;
    this.#waiters = undefined;
    for (const w of ws) w();
  }
}
