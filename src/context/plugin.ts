/**
 * The plugin contract and the dependency ordering used by `server.finish()`.
 */
import { ServerBuildError } from './errors.js';
import { describeValue, errorText } from './token.js';
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
 * @internal A plugin as `addPlugins` read it: every field read once and validated, so a
 * getter that changes (or throws) later can not change what `finish()` does.
 */
export interface PluginRecord {
  readonly plugin: Plugin;
  readonly id: string;
  readonly dependencies: readonly string[];
  readonly build: (this: Plugin, server: Server) => void | Promise<void>;
  readonly ready: ((this: Plugin, server: Server) => void | Promise<void>) | undefined;
  readonly cleanup: ((this: Plugin, server: Server) => void | Promise<void>) | undefined;
}

/** @internal Reads each field of `p` once and validates it; throws a TypeError naming the plugin and the field. */
export function readPlugin(p: unknown): PluginRecord {
  if (p === null || typeof p !== 'object') {
    throw new TypeError(`addPlugins(): ${describeValue(p)} is not a plugin ({ id: string, build(server) }).`);
  }
  // Not readField: the message names the field before the plugin ("reading build of
  // plugin 'p'"), the words the plugin-fields regression test pins.
  const field = (name: string, label: string): unknown => {
    try {
      return (p as Record<string, unknown>)[name];
    } catch (err) {
      throw new TypeError(`addPlugins(): reading ${name} of ${label} threw (${errorText(err)}); a plugin's fields must be plain readable values.`, {
        cause: err,
      });
    }
  };
  const id = field('id', describeValue(p));
  if (typeof id !== 'string' || id.length === 0) {
    throw new TypeError(`addPlugins(): ${describeValue(p)} is not a plugin ({ id: string, build(server) }): its id is ${describeValue(id)}.`);
  }
  const label = `plugin '${id}'`;
  const build = field('build', label);
  if (typeof build !== 'function') {
    throw new TypeError(`addPlugins(): ${label} is not a plugin ({ id: string, build(server) }): build is ${describeValue(build)}, not a function.`);
  }
  const ready = field('ready', label);
  const cleanup = field('cleanup', label);
  for (const [name, v] of [['ready', ready], ['cleanup', cleanup]] as const) {
    if (v !== undefined && typeof v !== 'function') {
      throw new TypeError(`addPlugins(): ${name} of ${label} must be a function or undefined, got ${describeValue(v)}.`);
    }
  }
  const deps = field('dependencies', label);
  let dependencies: string[] = [];
  if (deps !== undefined) {
    if (!Array.isArray(deps)) {
      const hint = typeof deps === 'string' ? ` Write dependencies: [${JSON.stringify(deps)}].` : '';
      throw new TypeError(`addPlugins(): dependencies of ${label} must be an array of plugin ids, got ${describeValue(deps)}.${hint}`);
    }
    try {
      dependencies = Array.from(deps as unknown[]) as string[];
    } catch (err) {
      throw new TypeError(`addPlugins(): reading the dependencies of ${label} threw (${errorText(err)}).`, { cause: err });
    }
    dependencies.forEach((d, i) => {
      if (typeof d !== 'string' || d.length === 0) {
        throw new TypeError(`addPlugins(): dependencies[${i}] of ${label} must be a plugin id (a non-empty string), got ${describeValue(d)}.`);
      }
    });
  }
  return Object.freeze({
    plugin: p as Plugin,
    id,
    dependencies: Object.freeze(dependencies),
    build: build as PluginRecord['build'],
    ready: ready as PluginRecord['ready'],
    cleanup: cleanup as PluginRecord['cleanup'],
  });
}

/**
 * @internal Orders plugins so each comes after its dependencies; among independent
 * plugins the order they were added is kept. Throws ServerBuildError for a missing
 * dependency (`not satisfied`) or a cycle (`Circular dependency`).
 */
export function orderPlugins(plugins: readonly PluginRecord[]): PluginRecord[] {
  const byId = new Map(plugins.map((p) => [p.id, p] as const));
  for (const p of plugins) {
    for (const dep of p.dependencies) {
      if (!byId.has(dep)) {
        throw new ServerBuildError(
          `Plugin '${p.id}' depends on '${dep}', which is not satisfied: no plugin with id '${dep}' was added. ` +
            `Add it with server.addPlugins(...) before finish(), or remove the dependency.`,
        );
      }
    }
  }
  const ordered: PluginRecord[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  // Iterative depth-first search (a long dependency chain can not overflow the stack).
  for (const start of plugins) {
    if (state.get(start.id) === 'done') continue;
    const path: PluginRecord[] = [start];
    const next: number[] = [0];
    state.set(start.id, 'visiting');
    while (path.length > 0) {
      const p = path[path.length - 1];
      const i = next[next.length - 1];
      if (i < p.dependencies.length) {
        next[next.length - 1]++;
        const dep = byId.get(p.dependencies[i]) as PluginRecord;
        const s = state.get(dep.id);
        if (s === 'done') continue;
        if (s === 'visiting') {
          const ids = path.map((q) => q.id);
          const cycle = [...ids.slice(ids.indexOf(dep.id)), dep.id];
          throw new ServerBuildError(
            `Circular dependency between plugins: ${cycle.join(' -> ')}. Break the cycle by removing one of these dependencies.`,
          );
        }
        state.set(dep.id, 'visiting');
        path.push(dep);
        next.push(0);
        continue;
      }
      state.set(p.id, 'done');
      ordered.push(p);
      path.pop();
      next.pop();
    }
  }
  return ordered;
}
