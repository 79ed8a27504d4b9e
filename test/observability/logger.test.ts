/**
 * `new Server({ logger })`: validated at construction, the console by default, and the one
 * place polestar reports what it contains (a failing listener); a throwing logger never
 * breaks the call that reports.
 */
import { jest } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Events, Server, Tools, ToolsPlugin, type Logger } from '../../src/index.js';
import { probe } from '../../src/testing/probe.js';

function recordingLogger(): { logger: Logger; lines: { level: string; message: string; data: unknown }[] } {
  const lines: { level: string; message: string; data: unknown }[] = [];
  return {
    lines,
    logger: {
      warn: (message, data) => void lines.push({ level: 'warn', message, data }),
      error: (message, data) => void lines.push({ level: 'error', message, data }),
    },
  };
}

async function serverWith(logger?: Logger): Promise<{ server: Server; tools: Tools; events: Events }> {
  const server = new Server(logger === undefined ? undefined : { logger });
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const app = server.createContext();
  app.get(Tools).register({ name: 'x', description: 'x', parameters: { type: 'object' }, execute: () => 'done' });
  return { server, tools: app.get(Tools), events: app.get(Events) };
}

describe('new Server({ logger }) validation', () => {
  test('a logger without warn or without error is a TypeError naming the missing method', () => {
    expect(() => new Server({ logger: { error: () => undefined } as never })).toThrow(TypeError);
    expect(() => new Server({ logger: { error: () => undefined } as never })).toThrow(/has no warn\(message, data\?\) method/);
    expect(() => new Server({ logger: { warn: () => undefined } as never })).toThrow(/has no error\(message, data\?\) method/);
    expect(() => new Server({ logger: { warn: () => undefined, error: 'loud' } as never })).toThrow(/has no error\(message, data\?\) method \(got the string "loud"\)/);
  });

  test('a logger that is no object, or whose methods can not be read, is a TypeError', () => {
    expect(() => new Server({ logger: 'console' as never })).toThrow(/logger must be an object with warn\(message, data\?\) and error\(message, data\?\) methods/);
    expect(() => new Server({ logger: null as never })).toThrow(TypeError);
    const hostile = {
      get warn(): never {
        throw new Error('no reading');
      },
      error: () => undefined,
    };
    expect(() => new Server({ logger: hostile as never })).toThrow(/reading logger\.warn threw \(no reading\)/);
    const options = {
      get logger(): never {
        throw new Error('no options');
      },
    };
    expect(() => new Server(options as never)).toThrow(/reading options\.logger threw \(no options\)/);
  });

  test('an unknown option still names the known ones, logger among them; the logger is not one of server.options', () => {
    expect(() => new Server({ log: console } as never)).toThrow(/the options are disposeTimeoutMs, borrows, borrowTimeoutMs, logger\. Did you mean "logger"\?/);
    const { logger } = recordingLogger();
    const server = new Server({ logger, disposeTimeoutMs: 5 });
    expect(server.options).toEqual({ disposeTimeoutMs: 5, borrows: 'fail', borrowTimeoutMs: 30_000 });
    expect(probe.serverLogger(server)).toBe(logger);
    expect(probe.serverLogger(new Server())).toBe(console);
  });

  test('a class instance with the methods on its prototype is a logger (called as methods)', async () => {
    class ClassLogger {
      readonly seen: string[] = [];
      warn(message: string): void {
        this.seen.push(message);
      }
      error(message: string): void {
        this.seen.push(`error: ${message}`);
      }
    }
    const logger = new ClassLogger();
    const { server, tools, events } = await serverWith(logger);
    events.on('tools/result', () => {
      throw new Error('observer broke');
    });
    await tools.execute({ callId: '1', name: 'x', arguments: {} });
    expect(logger.seen).toEqual(['[polestar] a tools/result observer of "x" (call 1) failed']);
    await server.dispose();
  });
});

describe('what goes to the logger', () => {
  test('a failing listener is reported to the server logger with its error, never to the console', async () => {
    const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((m) => jest.spyOn(console, m).mockImplementation(() => undefined));
    try {
      const { logger, lines } = recordingLogger();
      const { server, tools, events } = await serverWith(logger);
      const crash = new Error('observer crashed');
      events.on('tools/result', () => {
        throw crash;
      });
      events.on('tools/result', async () => {
        await Promise.resolve();
        throw new Error('async observer crashed');
      });
      const result = await tools.execute({ callId: 'c1', name: 'x', arguments: {} });
      expect(result.content).toBe('done');
      expect(lines).toEqual([
        { level: 'warn', message: '[polestar] a tools/result observer of "x" (call c1) failed', data: crash },
        { level: 'warn', message: '[polestar] a tools/result observer of "x" (call c1) failed', data: new Error('async observer crashed') },
      ]);
      await server.dispose();
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  test('without a logger the console is the default', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const { server, tools, events } = await serverWith();
      const crash = new Error('observer crashed');
      events.on('tools/result', () => {
        throw crash;
      });
      await tools.execute({ callId: 'c2', name: 'x', arguments: {} });
      expect(warn.mock.calls).toEqual([['[polestar] a tools/result observer of "x" (call c2) failed', crash]]);
      await server.dispose();
    } finally {
      warn.mockRestore();
    }
  });

  test('a logger that throws changes nothing for the call that reported', async () => {
    let calls = 0;
    const logger: Logger = {
      warn: () => {
        calls++;
        throw new Error('the logger is broken too');
      },
      error: () => undefined,
    };
    const { server, tools, events } = await serverWith(logger);
    events.on('tools/result', () => {
      throw new Error('observer crashed');
    });
    await expect(tools.execute({ callId: 'c3', name: 'x', arguments: {} })).resolves.toMatchObject({ content: 'done', isError: false });
    expect(calls).toBe(1);
    await server.dispose();
  });
});

test('polestar writes to the console nowhere in src (only the default logger refers to it)', () => {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) files.push(p);
    }
  };
  walk(join(process.cwd(), 'src'));
  expect(files.length).toBeGreaterThan(50);
  const uses: string[] = [];
  for (const f of files) {
    readFileSync(f, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const code = line.trim();
        if (code.startsWith('*') || code.startsWith('//') || code.startsWith('/*')) return; // documentation
        if (/\bconsole\s*[.[]/.test(code)) uses.push(`${f}:${i + 1}: ${code}`);
      });
  }
  expect(uses).toEqual([]);
});
