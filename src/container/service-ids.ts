/**
 * Derived inversify service identifiers for constructor parameters decorated with
 * `@res(T, { optional: true })`, `@resMut(T)` and `@out(T)`.
 *
 * A required `@res(T)` is recorded as plain `@inject(T)` (the two mean the same thing),
 * so classes bound in `server.container` can use it. The other kinds need their own
 * rule, so they get a private symbol per (kind, token) that only a context's container
 * binds.
 */
import { nameOf, type Token } from '../context/token.js';

/** @internal The rule a derived service id stands for. */
export type DerivedKind = 'optionalRes' | 'resMut' | 'out' | 'optionalOut';

/** @internal What a derived service id stands for. */
export interface DerivedId {
  readonly kind: DerivedKind;
  readonly token: Token;
}

const labels: Record<DerivedKind, string> = {
  optionalRes: 'Res?',
  resMut: 'ResMut',
  out: 'Out',
  optionalOut: 'Out?',
};

// Weak both ways (symbols made by Symbol() are weak keys on Node 20+): a token, and the
// derived id minted for it, can be collected once nothing else references them.
const byKind = new Map<DerivedKind, WeakMap<object, symbol>>();
const derived = new WeakMap<object, DerivedId>();

/** @internal The private service id of (kind, token), made once. */
export function derivedId(kind: DerivedKind, t: Token): symbol {
  let m = byKind.get(kind);
  if (m === undefined) byKind.set(kind, (m = new WeakMap()));
  const key = t as unknown as object;
  let id = m.get(key);
  if (id === undefined) {
    id = Symbol(`polestar:${labels[kind]}<${nameOf(t)}>`);
    m.set(key, id);
    derived.set(id as unknown as object, { kind, token: t });
  }
  return id;
}

/** @internal What a derived service id stands for; `undefined` for any other id. */
export function derivedOf(id: unknown): DerivedId | undefined {
  return typeof id === 'symbol' ? derived.get(id as unknown as object) : undefined;
}
