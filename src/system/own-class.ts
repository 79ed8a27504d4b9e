/**
 * The type-level brand of polestar's own classes, which makes `Res<T>` / `Out<T>` hand
 * them over as `T` rather than `Readonly<T>`.
 *
 * `Readonly<T>` of a class with `#private` members is a different type that can not be
 * passed back where the class is expected: `openSession(agent)` would not compile for an
 * `agent` that came from `Res(Agent)`. polestar's own classes (`Agent`, `SystemContext`,
 * `Session`, `DurableSession`, the registry views) are handles whose methods are the only
 * way to change them, so a read-only view of them protects nothing.
 */

/**
 * The brand key. Declared only: it exists in types, never at run time, so importing it
 * for a `declare` member costs nothing.
 */
export declare const ownClass: unique symbol;

/**
 * What a class of polestar's own carries: `declare readonly [ownClass]: true`. Any type
 * that has it is handed to `Res` / `Out` parameters as itself.
 */
export interface OwnClass {
  /** Type-level only: never present at run time. */
  readonly [ownClass]: true;
}
