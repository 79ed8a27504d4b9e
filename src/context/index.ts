// The context tree: tokens, markers, Server, SystemContext, outputs, errors, parent filters.
export { token, tokenName, isToken } from './token.js';
export type { Class, Token, TokenSymbol, TokenValue } from './token.js';
export { globalResource, localResource, roleOf } from './markers.js';
export type { ResourceRole } from './markers.js';
export { ParamError, ContextDisposedError, DisposeTimeoutError, ServerError, ServerBuildError } from './errors.js';
export type { ParamErrorKind } from './errors.js';
export { Outputs } from './outputs.js';
export type { TakenOutput } from './outputs.js';
export type { Plugin } from './plugin.js';
export { ParentFilter } from './parent-filter.js';
export type { ParentFilterKind } from './parent-filter.js';
export { Server } from './server.js';
export type { LocalFactory, LocalLifetime, RegisterLocalOptions } from './server.js';
export type { BorrowMode, ResolvedServerOptions, ServerOptions } from './server-options.js';
export { SystemContext } from './system-context.js';
export type { ChildOptions } from './system-context.js';
