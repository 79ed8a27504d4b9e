/**
 * A fast-check model of mountMcpTools: the server's tool list changes (with or without a
 * list_changed notification), refreshes, calls, the handle's dispose and the context's
 * disposal are interleaved, and every answer of the source (each page of tools/list, each
 * tools/call) arrives in an order the scheduler picks. Whatever the interleaving:
 * - the source is closed at most once, and exactly once after any disposal;
 * - it is never listed nor called after it was closed, and every call the server saw has
 *   settled or been aborted before close() ran;
 * - every tool call settles (never hangs) with ok, UNKNOWN_TOOL or EXECUTION_ERROR;
 * - a final refresh leaves exactly the server's current tools registered in the agent's
 *   scope (each with the server's current description), and names says so;
 * - after disposal nothing is registered and names is empty.
 */
import fc from 'fast-check';
import { Agents, AgentsPlugin, Server, Tools, ToolsPlugin } from '../../src/index.js';
import { mountMcpTools, type McpCallToolResult, type McpListToolsResult, type McpTool, type McpToolSource } from '../../src/adapters/index.js';
import { tool } from './fake-mcp-source.js';

const POOL = ['a', 'b', 'c', 'd'];

type Op =
  | { kind: 'set'; tools: { name: string; version: number }[]; notify: boolean }
  | { kind: 'refresh' }
  | { kind: 'call'; name: string }
  | { kind: 'dispose' }
  | { kind: 'disposeCtx' }
  | { kind: 'step' };

const toolsArb = fc.uniqueArray(fc.record({ name: fc.constantFrom(...POOL), version: fc.integer({ min: 0, max: 2 }) }), { selector: (t) => t.name, maxLength: 4 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('set' as const), tools: toolsArb, notify: fc.boolean() }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'refresh' as const }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('call' as const), name: fc.constantFrom(...POOL) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'dispose' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'disposeCtx' as const }) },
  { weight: 4, arbitrary: fc.constant({ kind: 'step' as const }) },
);

function asTools(list: { name: string; version: number }[]): McpTool[] {
  return list.map((t) => tool(t.name, { description: `${t.name} v${t.version}` }));
}

test('mount / refresh / list_changed / calls / dispose interleavings keep the source and the registry consistent', async () => {
  await fc.assert(
    fc.asyncProperty(fc.scheduler(), toolsArb, fc.integer({ min: 1, max: 3 }), fc.array(opArb, { maxLength: 12 }), async (s, initial, pageSize, ops) => {
      const server = new Server();
      server.addPlugins(new ToolsPlugin(), new AgentsPlugin());
      await server.finish();
      const app = server.createContext();
      const agent = await app.get(Agents).create({ id: 'agent' });
      const ctx = agent.agent.ctx;
      const tools = ctx.get(Tools);

      let current = asTools(initial);
      let closes = 0;
      let usedAfterClose = 0;
      let unsettledAtClose = 0;
      const open = new Set<AbortSignal>();
      let listener: (() => void) | undefined;
      const source: McpToolSource = {
        listTools(cursor?: string): Promise<McpListToolsResult> {
          if (closes > 0) usedAfterClose++;
          const start = cursor === undefined ? 0 : Number(cursor);
          const page = current.slice(start, start + pageSize);
          const next = start + pageSize < current.length ? { nextCursor: String(start + pageSize) } : {};
          return s.schedule(Promise.resolve({ tools: page, ...next }), `list@${cursor ?? 0}`);
        },
        callTool(name: string, _args: unknown, signal: AbortSignal): Promise<McpCallToolResult> {
          if (closes > 0) usedAfterClose++;
          open.add(signal);
          const answer = s.schedule(Promise.resolve({ content: [{ type: 'text', text: `${name} ok` }] }), `call ${name}`);
          const aborted = new Promise<never>((_r, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
          const settled = Promise.race([answer, aborted]);
          void settled.then(
            () => open.delete(signal),
            () => open.delete(signal),
          );
          return settled;
        },
        async close(): Promise<void> {
          closes++;
          for (const sig of open) if (!sig.aborted) unsettledAtClose++;
        },
        onToolsChanged(l: () => void): void {
          listener = l;
        },
      };

      const drain = async (): Promise<void> => {
        for (let i = 0; i < 50; i++) {
          await new Promise((r) => setTimeout(r, 0));
          if (s.count() === 0) return;
          await s.waitAll();
        }
      };

      const mounting = mountMcpTools(ctx, source).then(
        (m) => m,
        () => undefined,
      );
      await drain();
      const mount = await mounting;
      if (mount === undefined) throw new Error('the initial mount failed');
      expect(mount.names.length).toBe(initial.length);

      let disposed = false;
      const pending: Promise<unknown>[] = [];
      const results: string[] = [];
      for (const op of ops) {
        switch (op.kind) {
          case 'set':
            current = asTools(op.tools);
            if (op.notify) listener?.();
            break;
          case 'refresh':
            pending.push(mount.refresh().catch(() => undefined));
            break;
          case 'call':
            pending.push(
              tools
                .execute({ callId: 'c', name: op.name, arguments: {} })
                .then((r) => results.push(r.error?.code ?? 'ok'))
                .catch(() => results.push('REJECTED')),
            );
            break;
          case 'dispose':
            disposed = true;
            pending.push(mount.dispose());
            break;
          case 'disposeCtx':
            disposed = true;
            pending.push(agent.dispose());
            break;
          case 'step':
            if (s.count() > 0) await s.waitOne();
            break;
        }
      }
      await drain();
      await Promise.all(pending);
      await drain();

      expect(results.every((r) => r === 'ok' || r === 'UNKNOWN_TOOL' || r === 'EXECUTION_ERROR')).toBe(true);
      expect(results.length).toBe(ops.filter((o) => o.kind === 'call').length);
      if (!disposed) {
        const refreshed = mount.refresh();
        await drain();
        await refreshed;
        const want = current.map((t) => t.name).sort();
        expect([...mount.names].sort()).toEqual(want);
        expect(tools.knownNames().sort()).toEqual(want);
        for (const t of current) expect(tools.get(t.name)?.description).toBe(t.description);
        expect(closes).toBe(0);
        const closing = agent.dispose();
        await drain();
        await closing;
      }
      expect(closes).toBe(1);
      expect(usedAfterClose).toBe(0);
      expect(unsettledAtClose).toBe(0);
      expect(mount.names).toEqual([]);
      expect(app.get(Tools).knownNames()).toEqual([]);
      await server.dispose();
      expect(closes).toBe(1);
    }),
    { numRuns: 60 },
  );
});
