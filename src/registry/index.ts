/**
 * @internal The registry kit: what a registry kind is made of. A scoped list (items per
 * scope, owned by the context that registered them), an id registry (entries reserved, then
 * published, by id), the explicit-scope check of a read's `scope` argument, and
 * `definePlugin` (one instance per server, its global view, its leak probe). Not exported
 * from the package entry.
 */
export { ScopedList } from './scoped-list.js';
export { IdRegistry, type IdEntry } from './id-registry.js';
export { assertReadableScope, explicitScope, isReadableScope } from './explicit-scope.js';
export { definePlugin, type PluginKind, type PluginKindSpec } from './define-plugin.js';
