// The context tree: tokens, markers, Server, SystemContext, outputs, errors.
export { token, tokenName, isToken } from './token.js';
export type { Class, Token, TokenSymbol, TokenValue } from './token.js';
export { globalResource, localResource, roleOf } from './markers.js';
export type { ResourceRole } from './markers.js';
export { ParamError, ContextDisposedError, ServerError, ServerBuildError } from './errors.js';
export type { ParamErrorKind } from './errors.js';
export { Outputs } from './outputs.js';
export type { TakenOutput } from './outputs.js';
export type { Plugin } from './plugin.js';
export { Server } from './server.js';
export { SystemContext } from './system-context.js';
