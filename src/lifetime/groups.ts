/**
 * Work groups: one tracked in-flight record per lifetime for a whole module. A module
 * whose work comes and goes many times on one lifetime (the borrow holders of running
 * systems, the tool calls of a context) allocates a {@link GroupSlot} once, then asks a
 * lifetime for `lifetime.group(slot)`: the group is made and tracked on that lifetime the
 * first time, and its members join and leave it with no tracking call of their own.
 */
import type { LifetimeExtra } from './node.js';
import type { InFlight } from './work.js';

/** How many slots were allocated (slot indexes are 0, 1, …). */
let allocated = 0;

/**
 * @internal A key for one work group per lifetime, made once per module with
 * {@link groupSlot}. The first two slots allocated sit in fields of a lifetime's extra
 * record; later ones in a small array.
 */
export class GroupSlot<G extends InFlight> {
  /** The slot's position among all slots. */
  readonly index: number;
  /** What the slot holds, for messages and debugging, e.g. `tool calls`. */
  readonly label: string;
  /** Makes the group of one lifetime. */
  readonly make: () => G;

  /** @internal Use {@link groupSlot}. */
  constructor(label: string, make: () => G) {
    this.index = allocated++;
    this.label = label;
    this.make = make;
  }
}

/**
 * @internal Allocates a group slot: call once, at module load, and keep the result.
 * `make` builds the group of one lifetime, on that lifetime's first `group(slot)`.
 *
 * @example
 * ```ts
 * const CALLS = groupSlot('tool calls', () => new CallGroup());
 * ctx.group(CALLS).join(call);
 * ```
 */
export function groupSlot<G extends InFlight>(label: string, make: () => G): GroupSlot<G> {
  return new GroupSlot(label, make);
}

/** @internal The group stored in `x` for slot `index`, if any. */
export function readGroup(x: LifetimeExtra, index: number): InFlight | undefined {
  if (index === 0) return x.g0;
  if (index === 1) return x.g1;
  return x.gs?.[index - 2];
}

/** @internal Stores `g` in `x` as the group of slot `index`. */
export function writeGroup(x: LifetimeExtra, index: number, g: InFlight): void {
  if (index === 0) x.g0 = g;
  else if (index === 1) x.g1 = g;
  else (x.gs ??= [])[index - 2] = g;
}
