/**
 * @internal `definePlugin`: the bootstrap every registry plugin shares. One instance per
 * server, a global view of it bound to each context, and a leak probe for `assertNoLeaks`.
 */
import { ServerError } from '../context/errors.js';
import { setProvider } from '../context/provider-hints.js';
import type { Server } from '../context/server.js';
import type { SystemContext } from '../context/system-context.js';
import { nameOf, type Token } from '../context/token.js';
import type { EventBus } from '../events/bus.js';
import { installEvents } from '../events/events.js';

/** @internal What {@link definePlugin} takes: how one registry kind is installed on a server. */
export interface PluginKindSpec<R, V> {
  /** The name of the plugin class, for messages: `AgentsPlugin`. */
  readonly plugin: string;
  /** The token the view is installed under (a contextual global: `ctx.get(token)`). */
  readonly token: Token<V>;
  /**
   * Given the server's instance, the factory of the view `ctx.get(token)` returns (called
   * once per context): `(registry) => (ctx) => new Agents(registry, ctx)`. The factory is
   * what the server calls, so making a view costs what a hand-written one does.
   */
  readonly view: (instance: R) => (ctx: SystemContext) => V;
  /** One line per live scoped thing of the instance, for `assertNoLeaks`; omitted: the kind adds no probe. */
  readonly leaks?: (instance: R) => string[];
  /**
   * What a second install on one server does. `'refuse'` (the default): a global already
   * under `token` (a second install, or one inserted by hand) is a `ServerError` naming the
   * plugin. `'reuse'`: the first install's instance is kept and returned.
   */
  readonly once?: 'refuse' | 'reuse';
  /**
   * The call that installs the plugin (`server.addPlugins(new AgentsPlugin())`): a missing
   * `token` is then reported as `it is installed by AgentsPlugin: call … before
   * server.finish()`. Omitted: the kind records no hint.
   */
  readonly installedBy?: string;
}

/** @internal A registry kind's bootstrap, made by {@link definePlugin}. */
export interface PluginKind<R> {
  /**
   * Installs the kind on `server` (from a plugin's `build`): installs the shared `Events`
   * (once per server), makes the instance with `make(bus)`, installs the view under the
   * token, adds the leak probe, and returns the instance.
   *
   * @throws ServerError when the token already has a global (kinds that `'refuse'`).
   */
  install(server: Server, make: (bus: EventBus) => R): R;
  /** The instance installed on `server`, `undefined` when the plugin was not added. */
  of(server: Server): R | undefined;
}

/**
 * @internal Defines how one registry kind is installed: call it once, at module level,
 * next to the view class, and call `install` from the plugin's `build`.
 *
 * @example
 * ```ts
 * const notes = definePlugin<NoteRegistry, Notes>({
 *   plugin: 'NotesPlugin',
 *   token: Notes,
 *   view: (registry) => (ctx) => new Notes(registry, ctx),
 *   leaks: (registry) => registry.items.leaks(),
 *   installedBy: 'server.addPlugins(new NotesPlugin())',
 * });
 * class NotesPlugin implements Plugin {
 *   readonly id = 'notes';
 *   build(server: Server): void {
 *     notes.install(server, (bus) => new NoteRegistry(bus));
 *   }
 * }
 * ```
 */
export function definePlugin<R, V>(spec: PluginKindSpec<R, V>): PluginKind<R> {
  const { plugin, token, view, leaks } = spec;
  const reuse = spec.once === 'reuse';
  const instances = new WeakMap<Server, R>();
  if (spec.installedBy !== undefined) setProvider(token, `it is installed by ${plugin}: call ${spec.installedBy} before server.finish()`);
  return Object.freeze({
    install(server: Server, make: (bus: EventBus) => R): R {
      const bus = installEvents(server);
      const installed = reuse ? instances.get(server) : undefined;
      if (installed !== undefined) return installed;
      const instance = make(bus);
      if (!server.insertGlobalView(token, view(instance)) && !reuse) {
        const name = nameOf(token);
        throw new ServerError(`${plugin}: a global of token ${name} already exists; add ${plugin} once and do not insert ${name} by hand.`);
      }
      if (leaks !== undefined) server._leakProbes.add(() => leaks(instance));
      instances.set(server, instance);
      return instance;
    },
    of(server: Server): R | undefined {
      return instances.get(server);
    },
  });
}
