// PLACEHOLDER (replaced by the systems work): minimal types so the context compiles.
import type { SystemContext } from '../context/system-context.js';
/** @internal placeholder */
export interface AnySystem { readonly name: string; }
/** @internal placeholder */
export type SystemFn<R = unknown> = (...args: any[]) => R;
/** @internal placeholder */
export type _Ctx = SystemContext;
