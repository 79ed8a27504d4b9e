import 'reflect-metadata';
import { globalResource, Out, out, Res, res, ResMut, resMut, system, systemOf, token, type Param } from '../../src/index.js';
import { AppConfig, Scratchpad } from './helpers.js';

describe('parameter descriptors', () => {
  test('Res, ResMut and Out describe access, token and optionality', () => {
    expect(Res(AppConfig)).toEqual({ access: 'read', token: AppConfig, optional: false });
    expect(Res(AppConfig, { optional: true })).toEqual({ access: 'read', token: AppConfig, optional: true });
    expect(ResMut(Scratchpad)).toEqual({ access: 'write', token: Scratchpad, optional: false });
    const T = token<number>('T');
    expect(Out(T)).toEqual({ access: 'output', token: T, optional: false });
    expect(Out(T, { optional: true }).optional).toBe(true);
    expect(Object.isFrozen(Res(AppConfig))).toBe(true);
  });

  test('a non-token is a TypeError', () => {
    expect(() => Res('AppConfig' as never)).toThrow(TypeError);
    expect(() => ResMut((() => 1) as never)).toThrow(/expected a token/);
    expect(() => Out(Symbol('x') as never)).toThrow(TypeError);
    expect(() => Res(AppConfig, { optional: 'yes' } as never)).toThrow(/optional must be a boolean/);
    expect(() => (ResMut as (t: unknown, o: unknown) => Param)(Scratchpad, { optional: true })).toThrow(/never optional/);
  });

  test('ResMut and @resMut of a @globalResource() class throw at definition, naming the class and Res', () => {
    @globalResource()
    class Registry {}
    expect(() => ResMut(Registry)).toThrow(TypeError);
    expect(() => ResMut(Registry)).toThrow(/Registry is marked @globalResource\(\).*Res\(Registry\)/);
    expect(() => resMut(Registry)).toThrow(/@resMut\(Registry\).*globalResource/);
    expect(() => {
      class S {
        @system()
        static run(@resMut() _r: Registry) {}
      }
      return S;
    }).toThrow(/globalResource/);
    // reading it is fine
    expect(Res(Registry).access).toBe('read');
  });
});

describe('parameter decorators', () => {
  test('options alone keep the token inferred', () => {
    class S {
      @system()
      static run(@res({ optional: true }) _c: AppConfig, @out({ optional: true }) _o: Scratchpad) {}
    }
    expect(systemOf(S.run)?.params).toEqual([
      { access: 'read', token: AppConfig, optional: true },
      { access: 'output', token: Scratchpad, optional: true },
    ]);
  });

  test('inferred tokens are the parameter classes', () => {
    class S {
      @system()
      static run(@res() _c: AppConfig, @resMut() _s: Scratchpad) {}
    }
    const sys = systemOf(S.run);
    expect(sys?.params.map((p) => [p.access, p.token])).toEqual([
      ['read', AppConfig],
      ['write', Scratchpad],
    ]);
  });

  test('an interface or primitive parameter type without a token is a definition-time TypeError that says to pass it', () => {
    interface Llm {
      complete(): string;
    }
    expect(() => {
      class S {
        @system()
        static run(@res() _l: Llm) {}
      }
      return S;
    }).toThrow(/@res\(\) on parameter #0 of S\.run: the token can not be inferred.*Object.*Pass the token explicitly/);
    expect(() => {
      class S {
        @system()
        static run(@res(AppConfig) _c: AppConfig, @out() _n: string) {}
      }
      return S;
    }).toThrow(/parameter #1 .*String/);
    expect(() => {
      class S {
        @system()
        static run(@resMut() _n: number) {}
      }
      return S;
    }).toThrow(/Number.*@resMut\(MyClass\)/);
  });

  test('a Res<T> annotation is not mistaken for a token', () => {
    expect(() => {
      class S {
        @system()
        static run(@res() _c: Res<AppConfig>) {}
      }
      return S;
    }).toThrow(TypeError);
  });

  test('an explicit token wins over the annotation', () => {
    const NAME = token<string>('NAME');
    class S {
      @system()
      static run(@res(NAME) _n: string, @out(AppConfig, { optional: true }) _o: AppConfig | undefined) {}
    }
    expect(systemOf(S.run)?.params).toEqual([
      { access: 'read', token: NAME, optional: false },
      { access: 'output', token: AppConfig, optional: true },
    ]);
  });

  test('a bad explicit token is a TypeError when the decorator is made', () => {
    expect(() => res('x' as never)).toThrow(TypeError);
    expect(() => resMut(42 as never)).toThrow(TypeError);
    expect(() => out(null as never)).toThrow(TypeError);
  });
});
