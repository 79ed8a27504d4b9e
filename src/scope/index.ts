// Registration scopes and the layered registration primitive the registries share.
export { createScope, scopeOf } from './scope.js';
export type { Scope, ScopeOptions } from './scope.js';
export { RegistrationError } from './layers.js';
export { ContextView } from './context-view.js';
