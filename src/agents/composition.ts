/**
 * Composition: the agents created while an agent is still composing (running its setup,
 * unpublished) are published with it, as one group.
 */
/** @internal One member of a composition group and when its own setup settled. */
interface Member<A> {
  readonly agent: A;
  /** Resolves `true` when the member's setup (and prepare) finished, `false` when its create failed. Never rejects. */
  readonly ready: Promise<boolean>;
}

/**
 * @internal The group of agents composed with one root agent: the root (an agent whose
 * create found no composing agent above it) and, in creation order, every agent created
 * while an agent of the group was composing (a subagent of it, or an agent created
 * through a view of its context). The root's create publishes the whole group: the root,
 * then each member (registry, then `agent/created`), before it resolves; any failure
 * disposes the root, and with it every member (they are all in its subtree).
 * `A` is the agent type (`Agent`).
 */
export class Composition<A> {
  /** The agent whose create publishes the group. */
  readonly root: A;
  readonly #members: Member<A>[] = [];

  constructor(root: A) {
    this.root = root;
  }

  /**
   * Adds a member (in creation order) and returns the function its create calls once,
   * with `true` when the member's own setup finished or `false` when its create failed.
   */
  join(agent: A): (ok: boolean) => void {
    let settle!: (ok: boolean) => void;
    const ready = new Promise<boolean>((resolve) => {
      settle = resolve;
    });
    this.#members.push({ agent, ready });
    return settle;
  }

  /** Number of members so far (it grows while the group is composing or publishing). */
  get size(): number {
    return this.#members.length;
  }

  /** The `i`-th member in creation order. */
  member(i: number): Member<A> {
    return this.#members[i];
  }
}
