// Registration scopes.
export { createScope, scopeOf } from './scope.js';
export type { Scope } from './scope.js';
