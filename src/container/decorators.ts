/**
 * inversify's class decorators, re-exported from the inversify that polestar itself is
 * built on, so an application never imports a second copy of inversify by mistake (two
 * copies keep two metadata registries: classes decorated by one are unknown to the other).
 */
import { inject as inversifyInject, injectable as inversifyInjectable } from 'inversify';

/**
 * inversify's `@injectable()` class decorator (the very function `inversify` exports, from
 * the version polestar depends on): marks a class that `ctx.resolve(Class)` and
 * `server.container` may construct, recording its constructor parameter types.
 *
 * @example
 * ```ts
 * import { Server, inject, injectable, token } from 'polestar-di';
 *
 * const ApiKey = token<string>('ApiKey');
 *
 * @injectable()
 * class Client {
 *   constructor(@inject(ApiKey) readonly key: string) {}
 * }
 *
 * const server = new Server();
 * server.insertGlobal(ApiKey, 'secret');
 * await server.finish();
 * console.log(server.createContext().resolve(Client).key); // 'secret'
 * await server.dispose();
 * ```
 */
export const injectable: typeof inversifyInjectable = inversifyInjectable;

/**
 * inversify's `@inject(serviceId)` parameter and property decorator (the very function
 * `inversify` exports, from the version polestar depends on): names what to inject, e.g. a
 * {@link token} or a class. See {@link injectable} for an example.
 */
export const inject: typeof inversifyInject = inversifyInject;
