import 'reflect-metadata';
import { Container, inject, injectable } from 'inversify';
import { globalResource, isToken, localResource, ParamError, roleOf, Server, token, tokenName } from '../../src/index.js';

describe('token<T>(name)', () => {
  test('makes a unique symbol named by tokenName', () => {
    const a = token<string>('API_KEY');
    const b = token<string>('API_KEY');
    expect(typeof a).toBe('symbol');
    expect(a).not.toBe(b);
    expect(tokenName(a)).toBe('API_KEY');
    expect(isToken(a)).toBe(true);
  });

  test('two tokens with the same name are different keys', async () => {
    const a = token<string>('KEY');
    const b = token<string>('KEY');
    const server = new Server();
    server.insertGlobal(a, 'first');
    await server.finish();
    const ctx = server.createContext();
    expect(ctx.get(a)).toBe('first');
    expect(ctx.tryGet(b)).toBeUndefined();
    await server.dispose();
  });

  test('works as an inversify service identifier (@inject(API_KEY))', () => {
    const API_KEY = token<string>('API_KEY');
    @injectable()
    class Client {
      constructor(@inject(API_KEY) readonly key: string) {}
    }
    const c = new Container();
    c.bind(API_KEY).toConstantValue('secret');
    c.bind(Client).toSelf();
    expect(c.get(Client).key).toBe('secret');
  });

  test('needs a non-empty string name', () => {
    expect(() => token('')).toThrow(TypeError);
    expect(() => token(undefined as unknown as string)).toThrow(/non-empty string/);
  });

  test('tokenName of a class is its name', () => {
    class AppConfig {}
    expect(tokenName(AppConfig)).toBe('AppConfig');
  });

  test.each([
    ['a string', 'AppConfig'],
    ['a number', 42],
    ['null', null],
    ['undefined', undefined],
    ['a plain object', {}],
    ['an arrow function', () => 1],
    ['a foreign symbol', Symbol('x')],
  ])('tokenName(%s) is a TypeError', (_label, bad) => {
    expect(() => tokenName(bad as never)).toThrow(TypeError);
    expect(() => tokenName(bad as never)).toThrow(/expected a token/);
  });
});

describe('@globalResource() / @localResource()', () => {
  @globalResource()
  class AppConfig {
    agentName = 'a';
  }
  @localResource()
  class Scratchpad {
    notes: string[] = [];
  }
  class SubConfig extends AppConfig {}

  test('roleOf reads the marker, inherited by subclasses', () => {
    expect(roleOf(AppConfig)).toBe('global');
    expect(roleOf(Scratchpad)).toBe('local');
    expect(roleOf(SubConfig)).toBe('global');
    expect(roleOf(class Unmarked {})).toBeUndefined();
    expect(roleOf(token('t'))).toBeUndefined();
  });

  test('marking a class after it was looked up takes effect', () => {
    class Late {}
    expect(roleOf(Late)).toBeUndefined();
    globalResource()(Late);
    expect(roleOf(Late)).toBe('global');
  });

  async function setup() {
    const server = new Server();
    server.insertGlobal(new AppConfig());
    await server.finish();
    return { server, ctx: server.createContext() };
  }

  test('a global-marked class can not be inserted into a context', async () => {
    const { server, ctx } = await setup();
    expect(() => ctx.insert(new AppConfig())).toThrow(TypeError);
    expect(() => ctx.insert(AppConfig, new AppConfig())).toThrow(/AppConfig is marked @globalResource\(\).*server\.insertGlobal\(AppConfig/);
    expect(() => ctx.insert(new SubConfig())).toThrow(/SubConfig is marked @globalResource/);
    expect(ctx.hasLocal(AppConfig)).toBe(false);
    await server.dispose();
  });

  test('a global-marked class can not be registered as a local', () => {
    const server = new Server();
    expect(() => server.registerLocal(AppConfig)).toThrow(/registerLocal\(AppConfig\).*@globalResource\(\)/);
  });

  test('a local-marked class can not be inserted as a global', () => {
    const server = new Server();
    expect(() => server.insertGlobal(new Scratchpad())).toThrow(TypeError);
    expect(() => server.insertGlobal(Scratchpad, new Scratchpad())).toThrow(/Scratchpad is marked @localResource\(\).*registerLocal\(Scratchpad\)/);
    expect(() => server.insertGlobalView(Scratchpad, () => new Scratchpad())).toThrow(/@localResource/);
    expect(server.hasGlobal(Scratchpad)).toBe(false);
  });

  test('getMut of a global-marked class is a TypeError naming the class and Res, before ResourceNotFound', async () => {
    const { server, ctx } = await setup();
    let err: unknown;
    try {
      ctx.child().getMut(AppConfig);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TypeError);
    expect(err).not.toBeInstanceOf(ParamError);
    expect((err as Error).message).toMatch(/getMut\(AppConfig\).*@globalResource\(\).*ctx\.get\(AppConfig\)/);
    await server.dispose();
  });

  test('the marker rule comes first also when the class is nowhere, or only bound in server.container', async () => {
    @globalResource()
    class Registry {}
    @globalResource()
    @injectable()
    class Bound {}
    const server = new Server();
    server.container.bind(Bound).toSelf().inSingletonScope();
    await server.finish();
    const ctx = server.createContext().child();
    for (const [cls, name] of [
      [Registry, 'Registry'],
      [Bound, 'Bound'],
    ] as const) {
      let err: unknown;
      try {
        ctx.getMut(cls);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TypeError);
      expect(err).not.toBeInstanceOf(ParamError);
      expect((err as Error).message).toMatch(new RegExp(`getMut\\(${name}\\).*@globalResource\\(\\).*ctx\\.get\\(${name}\\)`));
    }
    await server.dispose();
  });

  test('unmarked classes and tokens may be used in either role', async () => {
    class Both {}
    const T = token<number>('T');
    const server = new Server();
    server.insertGlobal(new Both());
    server.insertGlobal(T, 1);
    server.registerLocal(Both);
    await server.finish();
    const ctx = server.createContext();
    ctx.insert(T, 2);
    expect(ctx.getMut(T)).toBe(2);
    expect(ctx.getMut(Both)).toBeInstanceOf(Both);
    await server.dispose();
  });

  test('local-marked classes work as locals', async () => {
    const server = new Server();
    server.registerLocal(Scratchpad);
    await server.finish();
    const ctx = server.createContext();
    ctx.getMut(Scratchpad).notes.push('x');
    const turn = ctx.child();
    turn.insert(new Scratchpad());
    expect(turn.getMut(Scratchpad).notes).toEqual([]);
    await server.dispose();
  });
});
