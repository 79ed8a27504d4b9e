// A fake given as a value global (`createTestAgent({ globals: [new FakeLibrary()] })`, the
// most common testing idiom) is stored under its own class, FakeLibrary. Asking for the
// class it fakes (`get(ToolLibrary)`) then said only "resource not found: ToolLibrary" with
// the generic fix. The error now names the registered subclass and the `[token, value]`
// pair that provides it under the base class.
import { ParamError, Res, Server, Tools, system } from '../../src/index.js';
import { createTestAgent, createTestServer } from '../../src/testing/index.js';

class ToolLibrary {
  list(): string[] {
    return ['real'];
  }
}

class FakeLibrary extends ToolLibrary {
  override list(): string[] {
    return ['fake'];
  }
}

class NarrowFake extends FakeLibrary {}

class Unrelated {}

function caught(fn: () => unknown): ParamError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ParamError);
    return err as ParamError;
  }
  throw new Error('expected a ParamError');
}

test('createTestAgent: get(ToolLibrary) names the FakeLibrary global and the pair that fixes it', async () => {
  const { agent, server } = await createTestAgent({ globals: [new FakeLibrary()] });
  try {
    const err = caught(() => agent.ctx.get(ToolLibrary));
    expect(err.kind).toBe('ResourceNotFound');
    expect(err.token).toBe(ToolLibrary);
    expect(err.message.startsWith('resource not found: ToolLibrary (')).toBe(true);
    expect(err.message).toContain('a global FakeLibrary (extends ToolLibrary) is registered: pass [ToolLibrary, value]');
    // The stored global is still reachable under its own class.
    expect(agent.ctx.get(FakeLibrary).list()).toEqual(['fake']);
    // The suggested fix works.
    const fixed = await createTestAgent({ globals: [[ToolLibrary, new FakeLibrary()]] });
    try {
      expect(fixed.agent.ctx.get(ToolLibrary).list()).toEqual(['fake']);
    } finally {
      await fixed.server.dispose();
    }
  } finally {
    await server.dispose();
  }
});

test('a system asking Res<ToolLibrary> gets the same hint', async () => {
  const server = await createTestServer({ globals: [new FakeLibrary()] });
  try {
    const read = system([Res(ToolLibrary)], (lib) => lib.list());
    const ctx = server.createContext();
    await expect(ctx.run(read)).rejects.toThrow(/a global FakeLibrary \(extends ToolLibrary\) is registered: pass \[ToolLibrary, value\]/);
    await ctx.dispose();
  } finally {
    await server.dispose();
  }
});

test('every registered subclass is named, deeper ones too; unrelated globals are not', async () => {
  const server = new Server();
  server.insertGlobal(new Unrelated());
  server.insertGlobal(new FakeLibrary());
  server.insertGlobal(new NarrowFake());
  await server.finish();
  try {
    const err = caught(() => server.createContext().child().get(ToolLibrary));
    expect(err.message).toContain('globals FakeLibrary, NarrowFake (each extends ToolLibrary) are registered: pass [ToolLibrary, value]');
    expect(err.message).not.toContain('Unrelated');
  } finally {
    await server.dispose();
  }
});

test('without a subclass global the message keeps its generic fix; a plugin-provided token keeps its own', async () => {
  const server = await createTestServer({ globals: [new Unrelated()] });
  try {
    const ctx = server.createContext();
    const err = caught(() => ctx.get(ToolLibrary));
    expect(err.message).not.toContain('extends');
    expect(err.message).toContain('insert it with ctx.insert(...)');
    // A base class global does not make its subclass "registered" the other way round.
    const based = await createTestServer({ globals: [new ToolLibrary()] });
    try {
      const sub = caught(() => based.createContext().get(FakeLibrary));
      expect(sub.message).not.toContain('extends');
    } finally {
      await based.dispose();
    }
    // Tools without the ToolsPlugin still says which plugin installs it.
    expect(caught(() => ctx.get(Tools)).message).toContain('ToolsPlugin');
  } finally {
    await server.dispose();
  }
});
