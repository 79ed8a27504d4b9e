// PLACEHOLDER (replaced by the container work).
import type { SystemContext } from '../context/system-context.js';
/** @internal placeholder */
export function resolveIn<T>(_ctx: SystemContext, _cls: new (...args: any[]) => T): T {
  throw new Error('resolve: not built yet');
}
/** @internal placeholder */
export function resolveInAsync<T>(_ctx: SystemContext, _cls: new (...args: any[]) => T): Promise<T> {
  return Promise.reject(new Error('resolve: not built yet'));
}
