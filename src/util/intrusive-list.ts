/**
 * @internal A doubly linked list whose nodes carry their own links (`prev` / `next`), so
 * adding and removing are O(1) and allocate nothing: the node is the entry.
 */

/** @internal What a node of an {@link IntrusiveList} carries: its neighbours in the list. */
export interface ListNode<N> {
  /** The neighbour towards the head; `undefined` at the head or when not in a list. */
  prev: N | undefined;
  /** The neighbour towards the tail; `undefined` at the tail or when not in a list. */
  next: N | undefined;
}

/**
 * @internal A doubly linked list of nodes that link themselves (see {@link ListNode}).
 *
 * A node is in at most one list at a time and the list does not check membership: the
 * owner of the node knows which list holds it (a node that must sit in two lists at once
 * carries one link object per list). Iterate with
 * `for (let n = list.head; n !== undefined; n = n.next)`.
 *
 * @example
 * ```ts
 * interface Entry extends ListNode<Entry> { readonly value: string }
 * const list = new IntrusiveList<Entry>();
 * const e: Entry = { value: 'a', prev: undefined, next: undefined };
 * list.push(e);
 * list.remove(e);
 * ```
 */
export class IntrusiveList<N extends ListNode<N>> {
  /** The first node, `undefined` when the list is empty. */
  head: N | undefined = undefined;
  /** The last node, `undefined` when the list is empty. */
  tail: N | undefined = undefined;
  /** How many nodes the list holds. */
  size = 0;

  /** Appends `node` (not in any list) at the tail. */
  push(node: N): void {
    const tail = this.tail;
    node.prev = tail;
    node.next = undefined;
    if (tail === undefined) this.head = node;
    else tail.next = node;
    this.tail = node;
    this.size++;
  }

  /** Prepends `node` (not in any list) at the head. */
  unshift(node: N): void {
    const head = this.head;
    node.next = head;
    node.prev = undefined;
    if (head === undefined) this.tail = node;
    else head.prev = node;
    this.head = node;
    this.size++;
  }

  /** Unlinks `node`, which must be in this list, and clears its links. */
  remove(node: N): void {
    this.unlinkKeepingNext(node);
    node.next = undefined;
  }

  /**
   * Unlinks `node`, which must be in this list, but leaves its `next` as it was: a walk
   * standing on `node` when it was removed still reaches the nodes after it. Use only when
   * such walks exist; the kept link holds the successor alive as long as `node` is.
   */
  unlinkKeepingNext(node: N): void {
    const { prev, next } = node;
    if (prev === undefined) this.head = next;
    else prev.next = next;
    if (next === undefined) this.tail = prev;
    else next.prev = prev;
    node.prev = undefined;
    this.size--;
  }
}
