// PLACEHOLDER (replaced by the systems work).
import type { SystemContext } from '../context/system-context.js';
/** @internal placeholder */
export function runOn(_ctx: SystemContext, _system: unknown): Promise<unknown> {
  return Promise.reject(new Error('run: not built yet'));
}
