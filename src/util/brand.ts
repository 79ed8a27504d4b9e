/**
 * Brands for error classes: a check that, unlike `instanceof`, also recognizes an error
 * made by another copy of polestar-di loaded in the same process (two installs of the
 * package, or one bundled and one not).
 */

/** A class whose instances are objects; the classes {@link branded} accepts. */
type AnyClass = abstract new (...args: never[]) => object;

/**
 * Brands `cls` as `polestar-di/<name>` and returns its check, meant to be stored as the
 * class's `static readonly is`:
 *
 * ```ts
 * class ParamError extends Error {
 *   static readonly is = branded(this, 'ParamError');
 * }
 * ```
 *
 * The brand is the registered symbol `Symbol.for('polestar-di/<name>')`, defined
 * (non-enumerable) on `cls.prototype`. Registered symbols are the same in every copy of
 * the package, and a subclass's prototype inherits the brand, so the check is true for an
 * instance of `cls` or a subclass from any copy, and false for everything else: other
 * classes' instances, plain objects, `structuredClone` copies (which lose the prototype),
 * and the prototype itself. Name the class by a string literal, not `cls.name`, which a
 * minifier may rename in one copy and not in the other.
 *
 * @param cls - the class to brand (in a static initializer, `this`).
 * @param name - the class's public name, e.g. `'ParamError'`.
 * @returns the check for instances of `cls`.
 */
export function branded<C extends AnyClass>(cls: C, name: string): (value: unknown) => value is InstanceType<C> {
  const brand = Symbol.for(`polestar-di/${name}`);
  Object.defineProperty(cls.prototype, brand, { value: true });
  return (value: unknown): value is InstanceType<C> =>
    typeof value === 'object' && value !== null && (value as { [brand]?: unknown })[brand] === true && !Object.hasOwn(value, brand);
}
