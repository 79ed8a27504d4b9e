/**
 * The shape of the tree `inspect` returns: its nodes (the server, contexts, agents and
 * sessions) and what an agent's or a durable session's node tells about it.
 */

/**
 * What a node of an {@link InspectNode} tree stands for:
 * - `'server'`: the server (only ever the root of a tree made by `inspect(server)`);
 * - `'agent'`: an agent's own context (`agent.ctx`);
 * - `'session'`: a session's context: one made by `openSession` or a durable session's
 *   (a context holding its own `ConversationHistory`);
 * - `'context'`: any other context: a root context, a turn, a registration scope, a child.
 */
export type InspectNodeKind = 'server' | 'context' | 'agent' | 'session';

/** The lease a durable session's agent holds, as this process knows it. */
export interface InspectLease {
  /** The lease owner: this server's `SessionsPlugin({ owner })` id. */
  readonly owner: string;
  /** The fencing epoch: 1 at `create`, one more at every `resume` (or take-over). */
  readonly epoch: number;
  /**
   * When the lease runs out unless it is renewed, in milliseconds since the epoch (compare
   * it with `Date.now()`): the time the last successful renewal (or the acquisition) was
   * sent plus the lease TTL, on this process's clock. The store's own expiry is at or after
   * it.
   */
  readonly expiresAt: number;
}

/** What an agent node tells about its agent. */
export interface InspectAgent {
  /** The agent's id. */
  readonly id: string;
  /** The agent's kind, when it was made from one. */
  readonly kind?: string;
  /**
   * The names of the tools its turns see (the global tools, its own, minus the ones its
   * restrictions remove), in the order `Tools.list()` gives them. For a disposed agent,
   * only what is still registered in its own scope (nothing, once its disposal ended).
   */
  readonly tools: readonly string[];
  /**
   * The names of the prompt sections its prompt assembles (the global ones and its own,
   * by `order`). For a disposed agent, only what is still registered in its own scope.
   */
  readonly sections: readonly string[];
  /**
   * How many event listeners are registered for its scope (through `agent.ctx` or a
   * context below it). Unscoped and global listeners hear every agent and are not counted.
   */
  readonly listeners: number;
  /** The lease of a durable session's agent; absent for any other agent, and once it was released. */
  readonly lease?: InspectLease;
}

/** What the node of a durable session's context tells about the session. */
export interface InspectSession {
  /** The session id. */
  readonly id: string;
  /** Its last committed turn (0 after `create`). */
  readonly committedTurn: number;
}

/**
 * One node of the tree `inspect` returns: frozen plain data (its arrays and objects are
 * frozen too), safe to keep, compare, log or `JSON.stringify`.
 */
export interface InspectNode {
  /** What the node stands for. */
  readonly kind: InspectNodeKind;
  /**
   * How it reads: `server`, `context`, `turn` (a context holding its own `Scratchpad`),
   * `scope <key>` (a registration scope made by `createScope`), `agent "<id>"`,
   * `session` (made by `openSession`) or `durable session "<id>"`.
   */
  readonly label: string;
  /** The context's `depth` (0 for a root context); -1 for the server. */
  readonly depth: number;
  /** Whether its disposal started (for the server: whether `dispose()` was called). */
  readonly disposed: boolean;
  /**
   * The names of the tokens of its own locals, oldest first. For the server node: the
   * tokens of its globals (inserted with `insertGlobal`, and the registries the plugins
   * installed), in insertion order; classes bound only in `server.container` are not
   * listed.
   */
  readonly locals: readonly string[];
  /** Its live child contexts, oldest first (for the server: its live root contexts). */
  readonly children: readonly InspectNode[];
  /** Set on an agent node. */
  readonly agent?: InspectAgent;
  /** Set on the node of a durable session's context (a session made by `openSession` has none). */
  readonly session?: InspectSession;
}
