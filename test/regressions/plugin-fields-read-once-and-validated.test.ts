/**
 * Issue 8 #17. Bug: plugin fields were neither validated nor snapshotted.
 * `dependencies: 'tools'` (a string) was read as the one-letter plugin ids 't', 'o', …;
 * a `dependencies` getter was read several times by finish(), so one that changed made
 * finish() fail with an internal TypeError (`reading 'id' of undefined`) instead of a
 * ServerBuildError; a throwing getter surfaced raw.
 * Fixed: addPlugins reads each field once, validates it (a TypeError naming the plugin,
 * the field and the fix; nothing is added) and finish() only uses that snapshot.
 */
import { Server, ServerBuildError, type Plugin } from '../../src/index.js';

const plain = (id: string, extra: Partial<Plugin> = {}): Plugin => ({ id, build: () => undefined, ...extra });

test("dependencies: 'tools' (a string) is refused with a clear TypeError, and nothing is added", () => {
  const server = new Server();
  server.addPlugins(plain('tools'));
  const bad = plain('agents', { dependencies: 'tools' as never });
  expect(() => server.addPlugins(plain('other'), bad)).toThrow(TypeError);
  expect(() => server.addPlugins(bad)).toThrow(/dependencies of plugin 'agents' must be an array of plugin ids, got the string "tools". Write dependencies: \["tools"\]/);
  expect(server.hasPlugin('agents')).toBe(false);
  expect(server.hasPlugin('other')).toBe(false);
});

test('a changing dependencies getter is read once: finish() uses that read, never an internal TypeError', async () => {
  let reads = 0;
  const changing = {
    id: 'changing',
    build: () => undefined,
    get dependencies(): string[] {
      reads++;
      return reads === 1 ? [] : ['ghost'];
    },
  };
  const server = new Server();
  server.addPlugins(changing);
  await expect(server.finish()).resolves.toBeUndefined();
  expect(reads).toBe(1);
  await server.dispose();
});

test('a missing dependency read at addPlugins is a ServerBuildError from finish()', async () => {
  let reads = 0;
  const server = new Server();
  server.addPlugins({
    id: 'a',
    build: () => undefined,
    get dependencies(): string[] {
      return reads++ === 0 ? ['ghost'] : [];
    },
  });
  await expect(server.finish()).rejects.toThrow(ServerBuildError);
  expect(reads).toBe(1);
});

test('throwing or malformed fields are TypeErrors naming the plugin and the field', () => {
  const server = new Server();
  const throwing = {
    id: 'p',
    build: () => undefined,
    get dependencies(): never {
      throw new Error('nope');
    },
  };
  expect(() => server.addPlugins(throwing)).toThrow(/reading dependencies of plugin 'p' threw \(nope\)/);
  expect(() => server.addPlugins(plain('q', { dependencies: ['a', 3 as never] }))).toThrow(/dependencies\[1\] of plugin 'q' must be a plugin id/);
  expect(() => server.addPlugins(plain('r', { ready: 'soon' as never }))).toThrow(/ready of plugin 'r' must be a function/);
  expect(() => server.addPlugins(plain(''))).toThrow(/is not a plugin/);
  expect(server.hasPlugin('p') || server.hasPlugin('q') || server.hasPlugin('r')).toBe(false);
});

test('build, ready and cleanup are the functions read at addPlugins, called with the plugin as this', async () => {
  const log: string[] = [];
  const p = {
    id: 'p',
    name: 'P',
    build(this: { name: string }) {
      log.push(`build ${this.name}`);
    },
    ready(this: { name: string }) {
      log.push(`ready ${this.name}`);
    },
    cleanup(this: { name: string }) {
      log.push(`cleanup ${this.name}`);
    },
  };
  const server = new Server();
  server.addPlugins(p);
  p.build = () => void log.push('replaced');
  await server.finish();
  await server.dispose();
  expect(log).toEqual(['build P', 'ready P', 'cleanup P']);
});
