import { Server, type SystemContext } from '../../src/index.js';

export class AppConfig {
  constructor(public agentName = 'claude') {}
}
export class ConversationHistory {
  messages: string[] = [];
}
export class Scratchpad {
  notes: string[] = [];
}
export class Summary {
  constructor(public text: string) {}
}

/** A finished server with an AppConfig global and a root context holding a Scratchpad. */
export async function setup(): Promise<{ server: Server; ctx: SystemContext }> {
  const server = new Server();
  server.insertGlobal(new AppConfig('claude'));
  await server.finish();
  const ctx = server.createContext();
  ctx.insert(new Scratchpad());
  return { server, ctx };
}

/** A promise with its resolve function, to hold a system mid-run. */
export interface Gate {
  promise: Promise<void>;
  open: () => void;
}
export function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}
