/**
 * ctx.resolve(Class): builds an injectable class through a context's own inversify
 * container, whose bindings delegate to polestar's rules.
 *
 * - A class bound in `server.container` (a global service) resolves there and only
 *   there: a shared singleton never captures the locals of the context that first
 *   asked for it.
 * - Any other class is bound (transient, unless its `@injectable(scope)` says otherwise)
 *   in a container made lazily for the context (`ctx._container`, no inversify parent).
 *   Its dependencies are bound there as dynamic values: `@inject(T)` / `@res(T)` follow
 *   the `Res` rule (an unknown class is itself built with `ctx.resolve`), `@resMut(T)`
 *   the `ResMut` rule, `@out(T)` read `ctx.outputs`.
 */
import { Container } from 'inversify';
import { ClassElementMetadataKind, getClassMetadata, type ClassElementMetadata } from '@inversifyjs/core';
import { ParamError } from '../context/errors.js';
import type { SystemContext } from '../context/system-context.js';
import { describeClassCandidate, isToken, nameOf, type Token } from '../context/token.js';
import { derivedOf } from './service-ids.js';

type Newable<T = unknown> = new (...args: any[]) => T;

const selfIds = new WeakMap<Newable, symbol>();
/** Classes being built synchronously right now (for cycle messages). */
const building: Newable[] = [];
/**
 * True while the innermost build on the stack is a `resolveAsync` (inversify's
 * `getAsync` calls dependency factories synchronously): an unknown class dependency is
 * then built with `resolveAsync` too, so its async activation is awaited instead of
 * failing as an unexpected asynchronous service.
 */
let asyncBuild = false;

function selfIdOf(cls: Newable): symbol {
  let id = selfIds.get(cls);
  if (id === undefined) selfIds.set(cls, (id = Symbol(`polestar:resolve<${cls.name || 'anonymous'}>`)));
  return id;
}

function assertClass(cls: unknown, where: string): asserts cls is Newable {
  if (typeof cls !== 'function' || cls.prototype === undefined) {
    throw new TypeError(`${where}: expected a class, got ${describeClassCandidate(cls)}.`);
  }
}

/** @internal `ctx.resolve(Class)`. */
export function resolveIn<T>(ctx: SystemContext, cls: Newable<T>): T {
  assertClass(cls, 'ctx.resolve(Class)');
  const global = ctx.server.container;
  if (global.isBound(cls)) return serverOwned(ctx, global.get(cls));
  assertNoCycle(cls);
  const id = prepare(ctx, cls);
  building.push(cls);
  const outer = asyncBuild;
  asyncBuild = false;
  try {
    return (ctx._container as Container).get(id) as T;
  } catch (err) {
    throw throughClass(err, cls);
  } finally {
    building.pop();
    asyncBuild = outer;
  }
}

function assertNoCycle(cls: Newable): void {
  if (building.includes(cls)) {
    const path = [...building.slice(building.indexOf(cls)), cls].map(className).join(' → ');
    throw new TypeError(`ctx.resolve(${cls.name}): circular dependency ${path}; break the cycle with a factory or a lazy lookup.`);
  }
}

/** @internal `ctx.resolveAsync(Class)`: the same, awaiting async activation. */
export async function resolveInAsync<T>(ctx: SystemContext, cls: Newable<T>): Promise<T> {
  assertClass(cls, 'ctx.resolveAsync(Class)');
  const global = ctx.server.container;
  if (global.isBound(cls)) return serverOwned(ctx, await global.getAsync(cls));
  assertNoCycle(cls);
  const id = prepare(ctx, cls);
  // Everything up to getAsync's first await runs synchronously, dependency factories
  // included: the stack and the flag cover exactly those nested builds.
  building.push(cls);
  const outer = asyncBuild;
  asyncBuild = true;
  let pending: Promise<unknown>;
  try {
    pending = (ctx._container as Container).getAsync(id);
  } catch (err) {
    throw throughClass(err, cls);
  } finally {
    building.pop();
    asyncBuild = outer;
  }
  try {
    return (await pending) as T;
  } catch (err) {
    throw throughClass(err, cls);
  }
}

/**
 * A {@link ParamError} that reached the build of `cls`, again with `cls` at the head of its
 * resolution path (a dependency's error names its token; each enclosing build adds its
 * class, in synchronous and asynchronous builds alike). Anything else passes unchanged.
 * Runs only on failure: a build that succeeds never makes a path.
 */
function throughClass(err: unknown, cls: Newable): unknown {
  if (!(err instanceof ParamError)) return err;
  return ParamError.withPath(err, [className(cls), ...(err.path ?? [nameOf(err.token)])]);
}

function className(cls: Newable): string {
  return cls.name || 'anonymous';
}

/**
 * Records a value made by `server.container` as owned by the server (as `ctx.get` does),
 * so a context that then holds it as a local never disposes it.
 */
function serverOwned<T>(ctx: SystemContext, v: T): T {
  if (v !== null && typeof v === 'object') ctx.server._containerValues.add(v);
  return v;
}

/** Binds `cls` and its dependencies in the context's container; returns its service id. */
function prepare(ctx: SystemContext, cls: Newable): symbol {
  const c = (ctx._container ??= new Container());
  const id = selfIdOf(cls);
  if (c.isBound(id)) return id;
  const meta = getClassMetadata(cls);
  const deps: ClassElementMetadata[] = [...meta.constructorArguments, ...meta.properties.values()];
  for (const d of deps) {
    if (d === undefined || d.kind === ClassElementMetadataKind.unmanaged) continue;
    const raw = d.value as unknown;
    const dep = raw !== null && typeof raw === 'object' && typeof (raw as { unwrap?: unknown }).unwrap === 'function'
      ? (raw as { unwrap(): unknown }).unwrap()
      : raw;
    bindDependency(ctx, c, dep);
  }
  c.bind(id).to(cls);
  return id;
}

function bindDependency(ctx: SystemContext, c: Container, dep: unknown): void {
  if (c.isBound(dep as never)) return;
  const d = derivedOf(dep);
  if (d !== undefined) {
    const t = d.token;
    const get =
      d.kind === 'optionalRes' ? () => ctx.tryGet(t)
      : d.kind === 'resMut' ? () => ctx.getMut(t)
      : d.kind === 'out' ? () => ctx.outputs.get(t)
      : () => ctx.outputs.tryGet(t);
    c.bind(dep as symbol).toDynamicValue(get);
    return;
  }
  if (isToken(dep)) {
    c.bind(dep).toDynamicValue(() => resDependency(ctx, dep));
    return;
  }
  // A string or foreign symbol: only the globals' container can know it.
  c.bind(dep as never).toDynamicValue(() => ctx.server.container.get(dep as never));
}

/** `@inject(T)` / `@res(T)`: the Res rule; an unknown class is built with ctx.resolve. */
function resDependency(ctx: SystemContext, t: Token): unknown {
  const v = ctx.tryGet(t);
  if (v !== undefined) return v;
  if (typeof t === 'function') return asyncBuild ? resolveInAsync(ctx, t as unknown as Newable) : resolveIn(ctx, t as unknown as Newable);
  throw new ParamError(
    'ResourceNotFound',
    t,
    `needed by a class built with ctx.resolve() on a ${ctx.describe()}; insert ${nameOf(t)} into the context or a global, or bind it in server.container`,
  );
}
