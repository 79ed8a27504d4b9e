/**
 * The agent behind `examples/agent-service.ts`: a deterministic scripted model (no network),
 * the tools it may call, and a persisted `Notes` local, so that a conversation's notes move
 * with it from one process to the next (a handoff, a restart).
 *
 * Nothing here knows about HTTP or processes: `installAgent(app)` registers the tools every
 * conversation sees, `agentSetup` sets one conversation's agent up (the same function in
 * every process, on create and on resume), and `answer` is the body of one turn.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { Tools, token, type AgentSetup, type ChatMessage, type LocalSerializer, type Session, type SystemContext } from 'polestar-di';

// ------------------------------------------------------------------ the scripted model

/** A tool call the model wants to make. */
export interface ModelToolCall {
  readonly name: string;
  readonly arguments: Record<string, string>;
}

/** What the model is asked: the conversation so far (the new user message last) and the tools it may call. */
export interface ModelRequest {
  readonly history: readonly ChatMessage[];
  readonly tools: readonly string[];
  /** Aborted when the turn is cancelled: a real client passes it to its HTTP call. */
  readonly signal: AbortSignal;
}

/** The model's answer: tool calls to make (possibly none) and text. */
export interface ModelReply {
  readonly toolCalls: readonly ModelToolCall[];
  readonly text: string;
}

/** A model client, stored as a global under {@link ModelClient}. Swap in a real one here. */
export interface ModelClient {
  complete(request: ModelRequest): Promise<ModelReply>;
}

/** The token of the model client global. */
export const ModelClient = token<ModelClient>('ModelClient');

/**
 * A deterministic model: it reads intents from the last user message ("weather in Oslo",
 * "calculate 6*7", `remember "..."`) and calls the matching tool when it was offered. A
 * message containing the word "slow" keeps it thinking for `slowMs` (30 s by default), so
 * that a turn is in flight long enough to be cancelled or killed; the turn's signal ends the
 * wait at once.
 */
export class ScriptedModel implements ModelClient {
  /** Number of requests served. */
  calls = 0;

  constructor(private readonly slowMs = 30_000) {}

  async complete(request: ModelRequest): Promise<ModelReply> {
    this.calls++;
    const text = String(request.history.at(-1)?.content ?? '');
    if (/\bslow\b/i.test(text)) await delay(this.slowMs, undefined, { signal: request.signal });
    const wanted: ModelToolCall[] = [];
    let m: RegExpMatchArray | null;
    if ((m = text.match(/weather in ([A-Za-z ]+?)(?:[.,?!]|$| and )/i))) wanted.push({ name: 'get_weather', arguments: { city: m[1].trim() } });
    if ((m = text.match(/calculate ([0-9+*/(). -]+)/i))) wanted.push({ name: 'calculator', arguments: { expression: m[1].trim() } });
    if ((m = text.match(/remember "([^"]+)"/i))) wanted.push({ name: 'note', arguments: { text: m[1] } });
    const toolCalls = wanted.filter((c) => request.tools.includes(c.name));
    return { toolCalls, text: toolCalls.length > 0 ? `Calling ${toolCalls.map((c) => c.name).join(', ')}.` : `You said: ${text}` };
  }
}

// ------------------------------------------------------------------ tools and the persisted local

const stringArg = (name: string) => ({
  type: 'object',
  properties: { [name]: { type: 'string', minLength: 1 } },
  required: [name],
  additionalProperties: false,
});

/** What one conversation's agent noted with the `note` tool: persisted with every turn. */
export class Notes {
  items: string[] = [];
}

/**
 * Persists {@link Notes} (pass it to `SessionsPlugin({ serializers })`). `restore` puts the
 * live instance back in place after a failed or cancelled turn.
 */
export const notesSerializer: LocalSerializer<Notes> = {
  key: 'agent-service.notes',
  version: 1,
  scope: 'agent',
  serialize: (notes) => notes.items,
  deserialize: (data) => Object.assign(new Notes(), { items: data as string[] }),
  restore: (target, data) => void (target.items = data as string[]),
};

/** Registers the tools every conversation's agent sees (globals of the application context). */
export function installAgent(app: SystemContext): void {
  const tools = app.get(Tools);
  tools.register({
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: stringArg('city'),
    execute: ({ city }: { city: string }) => `${city}: ${12 + (city.length % 10)}°C, light wind`,
  });
  tools.register({
    name: 'calculator',
    description: 'Evaluates + - * / and parentheses on integers',
    parameters: stringArg('expression'),
    execute: ({ expression }: { expression: string }) => String(evaluate(expression)),
  });
}

/**
 * One conversation's agent: its own `note` tool over its persisted {@link Notes}. The same
 * function runs wherever the conversation is opened; on resume the notes are restored before
 * it runs. The tool reads the local when it is called, never a reference captured here.
 */
export const agentSetup: AgentSetup = (agentCtx) => {
  agentCtx.get(Tools).register({
    name: 'note',
    description: 'Remembers a note for the rest of this conversation',
    parameters: stringArg('text'),
    execute: ({ text }: { text: string }, _execution: unknown, ctx: SystemContext) => {
      const notes = ctx.get(Notes);
      notes.items.push(text);
      return `noted (${notes.items.length} note(s): ${notes.items.join('; ')})`;
    },
  });
};

// ------------------------------------------------------------------ one turn

/** What one turn answers. */
export interface Answer {
  readonly reply: string;
  readonly toolCalls: readonly { name: string; content: string; isError: boolean }[];
  readonly historyLength: number;
  /** How long the model call took, in milliseconds (the rest of a request is the service's). */
  readonly modelMs: number;
}

/** The body of one turn: the user message, the model's reply and its tool calls, appended to the history. */
export async function answer(turnCtx: SystemContext, session: Session, text: string): Promise<Answer> {
  const tools = turnCtx.get(Tools);
  session.history.append({ role: 'user', content: text });
  const started = performance.now();
  const reply = await turnCtx.get(ModelClient).complete({
    history: session.history.messages,
    tools: tools.visible().map((t) => t.name),
    signal: turnCtx.signal,
  });
  const modelMs = performance.now() - started;
  const calls = reply.toolCalls.map((call, i) => ({ callId: `call-${session.history.length}-${i}`, name: call.name, arguments: call.arguments }));
  session.history.append(calls.length > 0 ? { role: 'assistant', content: reply.text, toolCalls: calls } : { role: 'assistant', content: reply.text });
  const toolCalls: { name: string; content: string; isError: boolean }[] = [];
  for (const call of calls) {
    const result = await tools.execute(call);
    session.history.append({ role: 'tool', callId: result.callId, content: result.content, isError: result.isError });
    toolCalls.push({ name: call.name, content: result.content, isError: result.isError });
  }
  return { reply: reply.text, toolCalls, historyLength: session.history.length, modelMs };
}

/** Integer arithmetic without eval: + - * / and parentheses. */
function evaluate(expression: string): number {
  const tokens = expression.match(/\d+|[-+*/()]/g) ?? [];
  let i = 0;
  const primary = (): number => {
    const t = tokens[i++];
    if (t === '(') {
      const v = sum();
      i++;
      return v;
    }
    if (t === '-') return -primary();
    if (t === undefined || !/^\d+$/.test(t)) throw new Error(`bad expression "${expression}"`);
    return Number(t);
  };
  const product = (): number => {
    let v = primary();
    while (tokens[i] === '*' || tokens[i] === '/') v = tokens[i++] === '*' ? v * primary() : Math.trunc(v / primary());
    return v;
  };
  const sum = (): number => {
    let v = product();
    while (tokens[i] === '+' || tokens[i] === '-') v = tokens[i++] === '+' ? v + product() : v - product();
    return v;
  };
  const v = sum();
  if (i !== tokens.length) throw new Error(`bad expression "${expression}"`);
  return v;
}
