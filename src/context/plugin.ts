/**
 * The plugin contract and the dependency ordering used by `server.finish()`.
 */
import { ServerBuildError } from './errors.js';
import type { Server } from './server.js';

/**
 * A unit of server setup. `build` runs during `server.finish()` after the plugins it
 * depends on; `ready` runs after every plugin was built, in the same order; `cleanup`
 * runs in reverse build order when the server is disposed.
 */
export interface Plugin {
  /** Unique id; `addPlugins` refuses a second plugin with the same id. */
  readonly id: string;
  /** Ids of plugins that must be built before this one. */
  readonly dependencies?: readonly string[];
  /** Installs globals, locals and container bindings. */
  build(server: Server): void | Promise<void>;
  /** Runs after every plugin was built. */
  ready?(server: Server): void | Promise<void>;
  /** Undoes what `build` did; runs when the server is disposed. */
  cleanup?(server: Server): void | Promise<void>;
}

/**
 * @internal Orders plugins so each comes after its dependencies; among independent
 * plugins the order they were added is kept. Throws ServerBuildError for a missing
 * dependency (`not satisfied`) or a cycle (`Circular dependency`).
 */
export function orderPlugins(plugins: readonly Plugin[]): Plugin[] {
  const byId = new Map(plugins.map((p) => [p.id, p] as const));
  for (const p of plugins) {
    for (const dep of p.dependencies ?? []) {
      if (!byId.has(dep)) {
        throw new ServerBuildError(
          `Plugin '${p.id}' depends on '${dep}', which is not satisfied: no plugin with id '${dep}' was added. ` +
            `Add it with server.addPlugins(...) before finish(), or remove the dependency.`,
        );
      }
    }
  }
  const ordered: Plugin[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (p: Plugin, path: string[]): void => {
    const s = state.get(p.id);
    if (s === 'done') return;
    if (s === 'visiting') {
      const cycle = [...path.slice(path.indexOf(p.id)), p.id];
      throw new ServerBuildError(
        `Circular dependency between plugins: ${cycle.join(' -> ')}. Break the cycle by removing one of these dependencies.`,
      );
    }
    state.set(p.id, 'visiting');
    for (const dep of p.dependencies ?? []) visit(byId.get(dep) as Plugin, [...path, p.id]);
    state.set(p.id, 'done');
    ordered.push(p);
  };
  for (const p of plugins) visit(p, []);
  return ordered;
}
