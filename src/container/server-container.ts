/**
 * `server.container`: an inversify `Container` that records every object it makes (so a
 * context never disposes one: every object the container made is the container's) and
 * becomes read-only once the server is finished.
 */
import {
  Container, type BindToFluentSyntax, type ContainerModule, type ContainerModuleLoadOptions, type ServiceIdentifier,
} from 'inversify';
import { ServerError } from '../context/errors.js';
import { describeValue } from '../context/token.js';
import { isThenable } from '../util/is-thenable.js';

type Id = Parameters<Container['bind']>[0];
type Activation = Parameters<Container['onActivation']>[1];

const READS = 'get, getAsync, getAll, getAllAsync, isBound and isCurrentBound';

/**
 * @internal The globals' container of a `Server`. Public type: `Container`.
 *
 * Every value it resolves (directly, or as a dependency it injects) is reported to
 * `made`: an activation hook is added for every service id bound through it (`bind`,
 * `rebind`, `onActivation`, and the same calls made by a loaded `ContainerModule`), and
 * the results of direct `get*` calls are reported too.
 */
export class ServerContainer extends Container {
  readonly #made: (v: unknown) => void;
  readonly #hooked = new Set<unknown>();
  #sealed = false;

  constructor(made: (v: unknown) => void) {
    super();
    this.#made = made;
  }

  #record(v: unknown): void {
    if (isThenable(v)) {
      v.then((r) => this.#made(r), () => undefined);
    } else {
      this.#made(v);
    }
  }

  /**
   * Adds the recording activation hook for `id` (once). A new function per id:
   * inversify's activation index keys relations by the handler, and one handler shared
   * by several ids breaks its `unbindAll`.
   */
  #hook(id: unknown): void {
    if (this.#hooked.has(id)) return;
    this.#hooked.add(id);
    super.onActivation(id as Id, (_ctx: unknown, v: unknown) => {
      this.#record(v);
      return v;
    });
  }

  /** A user activation handler whose result is recorded too (it may replace the value). */
  #wrap(fn: Activation): Activation {
    if (typeof fn !== 'function') return fn;
    return (ctx, v) => {
      const r = fn(ctx, v);
      this.#record(r);
      return r;
    };
  }

  /** Throws the sealed error for `method` (or returns it as a rejection for async methods). */
  #refuse(method: string): ServerError {
    return new ServerError(
      `server.container.${method}() was called after finish(): the server is sealed and its container is read-only ` +
        `(only ${READS} work, without autobind). Bind services before awaiting server.finish(), e.g. in a plugin's build().`,
    );
  }

  #check(method: string): void {
    if (this.#sealed) throw this.#refuse(method);
  }

  #checkOptions(method: string, options: unknown): void {
    if (!this.#sealed || options === undefined || options === null) return;
    let autobind: unknown;
    try {
      autobind = (options as { autobind?: unknown }).autobind;
    } catch {
      throw new ServerError(`server.container.${method}(id, options): reading options.autobind of ${describeValue(options)} threw.`);
    }
    if (autobind === true) {
      throw new ServerError(
        `server.container.${method}(id, { autobind: true }) was called after finish(): the server is sealed, and autobind ` +
          `would add a binding to its read-only container. Bind the class before awaiting server.finish().`,
      );
    }
  }

  /** @internal Seals the container (end of `server.finish()`). */
  _seal(): void {
    this.#sealed = true;
  }

  /** @internal Binds a global-value bridge without the recording hook (the server owns those values). */
  _bindGlobal(id: Id): ReturnType<Container['bind']> {
    return super.bind(id);
  }

  /** @internal `server.dispose()`: unbinds everything, running inversify deactivation once. */
  _unbindAllOnDispose(): Promise<void> {
    return super.unbindAllAsync();
  }

  // ------------------------------------------------------------ reads (always allowed)

  override get<T>(serviceIdentifier: Id, options?: any): T {
    this.#checkOptions('get', options);
    const v = super.get(serviceIdentifier, options) as T;
    this.#made(v);
    return v;
  }

  override getAll<T>(serviceIdentifier: Id, options?: any): T[] {
    this.#checkOptions('getAll', options);
    const vs = super.getAll(serviceIdentifier, options) as T[];
    for (const v of vs) this.#made(v);
    return vs;
  }

  override async getAsync<T>(serviceIdentifier: Id, options?: any): Promise<T> {
    this.#checkOptions('getAsync', options);
    const v = (await super.getAsync(serviceIdentifier, options)) as T;
    this.#made(v);
    return v;
  }

  override async getAllAsync<T>(serviceIdentifier: Id, options?: any): Promise<T[]> {
    this.#checkOptions('getAllAsync', options);
    const vs = (await super.getAllAsync(serviceIdentifier, options)) as T[];
    for (const v of vs) this.#made(v);
    return vs;
  }

  // ------------------------------------------------------------ writes (refused once sealed)

  override bind<T>(serviceIdentifier: ServiceIdentifier<T>): BindToFluentSyntax<T> {
    this.#check('bind');
    this.#hook(serviceIdentifier);
    return super.bind<T>(serviceIdentifier);
  }

  override rebind<T>(serviceIdentifier: ServiceIdentifier<T>): BindToFluentSyntax<T> {
    this.#check('rebind');
    this.#hook(serviceIdentifier);
    return super.rebind<T>(serviceIdentifier);
  }

  override async rebindAsync<T>(serviceIdentifier: ServiceIdentifier<T>): Promise<BindToFluentSyntax<T>> {
    this.#check('rebindAsync');
    this.#hook(serviceIdentifier);
    return super.rebindAsync<T>(serviceIdentifier);
  }

  override onActivation<T>(serviceIdentifier: Id, activation: any): void {
    this.#check('onActivation');
    this.#hook(serviceIdentifier);
    super.onActivation<T>(serviceIdentifier as never, this.#wrap(activation) as never);
  }

  override onDeactivation<T>(serviceIdentifier: Id, deactivation: any): void {
    this.#check('onDeactivation');
    super.onDeactivation<T>(serviceIdentifier as never, deactivation);
  }

  override load(...modules: ContainerModule[]): void {
    this.#check('load');
    this.#instrumented(modules, () => super.load(...modules));
  }

  override async loadAsync(...modules: ContainerModule[]): Promise<void> {
    this.#check('loadAsync');
    let pending!: Promise<void>;
    this.#instrumented(modules, () => {
      pending = super.loadAsync(...modules);
    });
    await pending;
  }

  override unload(...modules: ContainerModule[]): void {
    this.#check('unload');
    super.unload(...modules);
  }

  override async unloadAsync(...modules: ContainerModule[]): Promise<void> {
    this.#check('unloadAsync');
    await super.unloadAsync(...modules);
  }

  override unbind(identifier: Parameters<Container['unbind']>[0]): void {
    this.#check('unbind');
    super.unbind(identifier);
  }

  override async unbindAsync(identifier: Parameters<Container['unbindAsync']>[0]): Promise<void> {
    this.#check('unbindAsync');
    await super.unbindAsync(identifier);
  }

  override unbindAll(): void {
    this.#check('unbindAll');
    super.unbindAll();
  }

  override async unbindAllAsync(): Promise<void> {
    this.#check('unbindAllAsync');
    await super.unbindAllAsync();
  }

  override register(pluginConstructor: Parameters<Container['register']>[0]): void {
    this.#check('register');
    super.register(pluginConstructor);
  }

  override snapshot(): void {
    this.#check('snapshot');
    super.snapshot();
  }

  override restore(): void {
    this.#check('restore');
    super.restore();
  }

  /**
   * Runs `load` with each module's `load(options)` shadowed for the synchronous part of
   * the call, so the bindings and activations it makes get the recording hook.
   */
  #instrumented(modules: ContainerModule[], load: () => void): void {
    const shadowed: ContainerModule[] = [];
    try {
      for (const m of modules) {
        if (m === null || typeof m !== 'object' || Object.prototype.hasOwnProperty.call(m, 'load')) continue;
        const original = m.load;
        if (typeof original !== 'function') continue;
        Object.defineProperty(m, 'load', {
          configurable: true,
          writable: true,
          value: (options: ContainerModuleLoadOptions) => original.call(m, this.#instrumentOptions(options)),
        });
        shadowed.push(m);
      }
      load();
    } finally {
      for (const m of shadowed) delete (m as { load?: unknown }).load;
    }
  }

  #instrumentOptions(o: ContainerModuleLoadOptions): ContainerModuleLoadOptions {
    return {
      ...o,
      bind: ((id: Id) => {
        this.#hook(id);
        return o.bind(id as never);
      }) as ContainerModuleLoadOptions['bind'],
      rebind: ((id: Id) => {
        this.#hook(id);
        return o.rebind(id as never);
      }) as ContainerModuleLoadOptions['rebind'],
      rebindAsync: ((id: Id) => {
        this.#hook(id);
        return o.rebindAsync(id as never);
      }) as ContainerModuleLoadOptions['rebindAsync'],
      onActivation: ((id: Id, fn: Activation) => {
        this.#hook(id);
        o.onActivation(id as never, this.#wrap(fn) as never);
      }) as ContainerModuleLoadOptions['onActivation'],
    };
  }
}
