/**
 * Shared pieces of the durable-session tests: a server with AgentsPlugin + SessionsPlugin
 * on a given store, a persisted `Memory` local, and an event recorder.
 */
import { AgentsPlugin, Events, Server, SessionsPlugin, type LocalSerializer, type SessionStore, type SessionsPluginOptions } from '../../src/index.js';
import type { SystemContext } from '../../src/index.js';

/** A local persisted with the agent: a counter and notes. */
export class Memory {
  count = 0;
  notes: string[] = [];
  disposed = false;
  [Symbol.dispose](): void {
    this.disposed = true;
  }
}

/** A session-scope local. */
export class Draft {
  text = '';
}

export const memorySerializer: LocalSerializer<Memory> = {
  key: 'test.memory',
  version: 1,
  scope: 'agent',
  serialize: (m) => ({ count: m.count, notes: [...m.notes] }),
  deserialize: (data) => {
    const d = data as { count: number; notes: string[] };
    return Object.assign(new Memory(), { count: d.count, notes: [...d.notes] });
  },
};

export const draftSerializer: LocalSerializer<Draft> = {
  key: 'test.draft',
  version: 1,
  scope: 'session',
  serialize: (d) => d.text,
  deserialize: (data) => Object.assign(new Draft(), { text: data as string }),
};

export interface Harness {
  readonly server: Server;
  readonly ctx: SystemContext;
}

/** A finished server sharing `store`, with Memory registered `per: 'agent'` and Draft `per: 'session'`. */
export async function serverOn(store: SessionStore, options: SessionsPluginOptions = {}): Promise<Harness> {
  const server = new Server();
  server.registerLocal(Memory, { per: 'agent' });
  server.registerLocal(Draft, { per: 'session' });
  server.addPlugins(
    new AgentsPlugin(),
    new SessionsPlugin({ store, serializers: [[Memory, memorySerializer], [Draft, draftSerializer]], ...options }),
  );
  await server.finish();
  return { server, ctx: server.createContext() };
}

export interface Recorded {
  readonly name: string;
  readonly payload: Record<string, unknown>;
}

const NAMES = ['session/created', 'session/resumed', 'session/turn-committed', 'session/rolled-back', 'session/lease-lost', 'session/disposed'];

/** Records every session/* event heard by an unscoped listener on `ctx`. */
export function recordEvents(ctx: SystemContext): Recorded[] {
  const out: Recorded[] = [];
  const events = ctx.get(Events);
  for (const name of NAMES) events.on(name, (...args: unknown[]) => void out.push({ name, payload: args[0] as Record<string, unknown> }));
  return out;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Resolves when `signal` aborts, or after `ms` (a turn standing in for a slow model call that its abort ends). */
export function untilAborted(signal: AbortSignal, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A store that forwards to `inner`, with some methods replaced (stands in for a slow or failing backend). */
export function delegateStore(inner: SessionStore, overrides: Partial<SessionStore>): SessionStore {
  const methods = ['create', 'acquire', 'renew', 'release', 'begin', 'append', 'commit', 'abort', 'rollback', 'pin', 'load', 'checkpoints', 'list', 'delete', 'events', 'close'] as const;
  const out: Record<string, unknown> = {};
  for (const m of methods) out[m] = overrides[m] ?? (inner[m] as (...a: unknown[]) => unknown).bind(inner);
  // Optional in the contract: forwarded only when there is one.
  const status = overrides.attemptStatus ?? inner.attemptStatus?.bind(inner);
  if (status !== undefined) out.attemptStatus = status;
  return out as unknown as SessionStore;
}
