/**
 * polestar conversations (`ChatMessage[]`) to the Vercel AI SDK's `ModelMessage[]` and
 * back, lossless both ways. What one side can not say travels in the other's spare room:
 * AI SDK parts polestar does not model go in `meta.aiSdk` (binary data as
 * `{ $bytes: <base64>, as }`, URLs as `{ $url }`), and what a `ChatMessage` carries that a
 * `ModelMessage` does not (its own `meta`, an empty `toolCalls`) goes in
 * `providerOptions.polestar`, which providers ignore.
 */
import type { ModelMessage } from 'ai';
import { snapshotChatMessage, type ChatMessage, type ChatToolCall } from '../../../conversation/chat-message.js';
import { describeValue } from '../../../util/describe-value.js';
import { MAX_JSON_DEPTH, snapshotJson, thawJson, type JsonValue } from '../../../util/lossless-json.js';
import { extrasOf, isObj, jsonEqual, residualOf, withExtras, withoutUndefined, type Obj, type ProviderKey } from '../provider-meta.js';
import { TEXT_JOIN, decodeContent, encodeContent, isPlaceholder, isTextPart, splitJoined } from '../text-layout.js';

const KEY: ProviderKey = 'aiSdk';
const STASH = 'polestar';
const TEXT = ['text'];
const textPart = (text: string): Obj => ({ type: 'text', text });

// ---- binary data and URLs, at the two places the AI SDK puts them (image.image, file.data)

const DATA_FIELD: Readonly<Record<string, string>> = { image: 'image', file: 'data' };

// Tags rather than instanceof: the SDK's values may come from another realm (a vm context, a test runner).
const tagOf = (v: unknown): string => Object.prototype.toString.call(v);

function encodeData(v: unknown, where: string): unknown {
  if (typeof v === 'string') return v;
  if (v instanceof URL || tagOf(v) === '[object URL]') return { $url: (v as URL).href };
  if (Buffer.isBuffer(v)) return { $bytes: v.toString('base64'), as: 'Buffer' };
  if (tagOf(v) === '[object Uint8Array]') {
    const b = v as Uint8Array;
    return { $bytes: Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64'), as: 'Uint8Array' };
  }
  if (tagOf(v) === '[object ArrayBuffer]') return { $bytes: Buffer.from(v as ArrayBuffer).toString('base64'), as: 'ArrayBuffer' };
  throw new TypeError(`${where} must be a string, a URL, a Uint8Array, an ArrayBuffer or a Buffer, got ${describeValue(v)}.`);
}

function decodeData(v: unknown): unknown {
  if (!isObj(v)) return v;
  if (typeof v.$url === 'string') return new URL(v.$url);
  if (typeof v.$bytes === 'string') {
    const buf = Buffer.from(v.$bytes, 'base64');
    if (v.as === 'Buffer') return buf;
    const bytes = new Uint8Array(buf.byteLength);
    bytes.set(buf);
    return v.as === 'ArrayBuffer' ? bytes.buffer : bytes;
  }
  return v;
}

function encodeParts(parts: readonly unknown[], where: string): unknown[] {
  return Array.from(parts, (p, j) => {
    const field = isObj(p) && typeof p.type === 'string' ? DATA_FIELD[p.type] : undefined;
    if (field === undefined || !isObj(p) || !(field in p)) return localCopy(p, 0);
    return { ...(localCopy(p, 0) as Obj), [field]: encodeData(p[field], `${where}.content[${j}].${field}`) };
  });
}

/**
 * A copy of plain data made of this realm's arrays and objects (the SDK's may come from
 * another realm); anything else is kept for the JSON check to judge.
 */
function localCopy(v: unknown, depth: number): unknown {
  if (v === null || typeof v !== 'object' || depth > MAX_JSON_DEPTH) return v;
  if (Array.isArray(v)) return Array.from(v as unknown[], (x) => localCopy(x, depth + 1));
  const proto = Object.getPrototypeOf(v) as object | null;
  if (proto !== null && tagOf(v) !== '[object Object]') return v;
  if (proto !== null && proto !== Object.prototype && Object.getPrototypeOf(proto) !== null) return v;
  const out: Obj = {};
  for (const k of Object.keys(v)) {
    const x = localCopy((v as Obj)[k], depth + 1);
    if (k === '__proto__') Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
    else out[k] = x;
  }
  return out;
}

function decodeParts(parts: unknown): unknown {
  if (!Array.isArray(parts)) return parts;
  return parts.map((p: unknown) => {
    const field = isObj(p) && typeof p.type === 'string' ? DATA_FIELD[p.type] : undefined;
    if (field === undefined || !isObj(p) || !(field in p)) return p;
    return { ...p, [field]: decodeData(p[field]) };
  });
}

// ---- providerOptions.polestar: what a ChatMessage says that a ModelMessage can not

interface Stash {
  meta?: JsonValue;
  emptyToolCalls?: true;
}

/** Splits `providerOptions.polestar` (when it has the shape `toAiSdkMessages` writes) off `extras`. */
function splitStash(extras: Obj): { stash: Stash | undefined; rest: Obj } {
  const po = extras.providerOptions;
  if (!isObj(po) || !isObj(po[STASH])) return { stash: undefined, rest: extras };
  const s = po[STASH];
  const keys = Object.keys(s);
  if (keys.length === 0 || keys.some((k) => k !== 'meta' && k !== 'emptyToolCalls') || ('emptyToolCalls' in s && s.emptyToolCalls !== true)) {
    return { stash: undefined, rest: extras };
  }
  const restPo = extrasOf(po, [STASH]);
  const rest = extrasOf(extras, ['providerOptions']);
  if (Object.keys(restPo).length > 0) rest.providerOptions = restPo;
  return { stash: s as Stash, rest };
}

/** The meta of a message read back: the stashed meta, plus `aiSdk` when there is a residual. */
function metaFor(stash: Stash | undefined, residual: Obj): { meta?: unknown } {
  const r = withoutUndefined(residual) as Obj;
  const hasR = Object.keys(r).length > 0;
  if (stash?.meta === undefined) return hasR ? { meta: { [KEY]: r } } : {};
  if (!hasR) return { meta: stash.meta };
  return { meta: { ...(stash.meta as Obj), [KEY]: r } };
}

/** Whether the stashed meta can be merged with a residual (an object without its own `aiSdk`). */
function stashFits(stash: Stash | undefined, residual: Obj): boolean {
  if (stash?.meta === undefined) return true;
  if (Object.keys(withoutUndefined(residual) as Obj).length === 0) return true;
  // merged as `{ ...meta, aiSdk }`: an empty meta would read back as no meta at all
  return isObj(stash.meta) && !Object.hasOwn(stash.meta, KEY) && Object.keys(stash.meta).length > 0;
}

/** The stash for a ChatMessage going out, or `undefined` when it needs none. */
function stashOf(message: ChatMessage): Stash | undefined {
  const out: Stash = {};
  const meta = message.meta;
  if (meta !== undefined) {
    if (isObj(meta) && isObj((meta as Obj)[KEY])) {
      const rest = extrasOf(meta as Obj, [KEY]);
      if (Object.keys(rest).length > 0) out.meta = rest as JsonValue;
    } else out.meta = meta;
  }
  if (message.role === 'assistant' && message.toolCalls?.length === 0) out.emptyToolCalls = true;
  return Object.keys(out).length === 0 ? undefined : out;
}

/** `obj` with the stash added to its `providerOptions`. */
function withStash(obj: Obj, stash: Stash | undefined): Obj {
  if (stash === undefined) return obj;
  const po = isObj(obj.providerOptions) ? obj.providerOptions : {};
  return { ...obj, providerOptions: { ...po, [STASH]: thawJson(stash as JsonValue) } };
}

// ---- tool results

function outputOf(output: unknown, where: string): { content: string; isError?: true; residual?: Obj } {
  if (!isObj(output)) throw new TypeError(`${where}.output must be a tool result output { type, value }, got ${describeValue(output)}.`);
  const type = output.type;
  const extra = (consumed: string[]): Obj | undefined => {
    const e = extrasOf(output, ['type', ...consumed]);
    return Object.keys(e).length > 0 ? e : undefined;
  };
  const withExtra = (r: Obj, e: Obj | undefined): Obj => (e === undefined ? r : { ...r, extra: e });
  switch (type) {
    case 'text':
    case 'error-text': {
      if (typeof output.value !== 'string') break;
      const e = extra(['value']);
      return { content: output.value, ...(type === 'error-text' ? { isError: true as const } : {}), ...(e === undefined ? {} : { residual: { extra: e } }) };
    }
    case 'json':
    case 'error-json': {
      let text: string;
      try {
        // `undefined` object properties are left out, as JSON (and the SDK) writes them
        text = JSON.stringify(snapshotJson(withoutUndefined(output.value), `${where}.output.value`, 'value'));
      } catch {
        break;
      }
      return { content: text, ...(type === 'error-json' ? { isError: true as const } : {}), residual: withExtra({ type }, extra(['value'])) };
    }
    case 'execution-denied': {
      if (output.reason !== undefined && typeof output.reason !== 'string') break;
      const r: Obj = { type };
      if (output.reason === undefined) r.noReason = true;
      return { content: output.reason ?? '', isError: true, residual: withExtra(r, extra(['reason'])) };
    }
    case 'content': {
      if (!Array.isArray(output.value)) break;
      const r: Obj = {};
      const content = decodeContent(output.value, TEXT, r, 'value', `${where}.output`);
      return { content, residual: withExtra({ type, value: r.value }, extra(['value'])) };
    }
  }
  return { content: '', residual: { raw: output } };
}

function outputFor(m: Extract<ChatMessage, { role: 'tool' }>, ro: Obj | undefined): unknown {
  const text = m.content;
  const isError = m.isError === true;
  if (ro !== undefined && 'raw' in ro && text === '' && !isError) return ro.raw;
  let out: Obj | undefined;
  const type = ro?.type;
  if (type === 'json' || type === 'error-json') {
    try {
      out = { type: isError ? 'error-json' : 'json', value: JSON.parse(text) as unknown };
    } catch {
      out = undefined;
    }
  } else if (type === 'execution-denied' && isError) {
    out = ro?.noReason === true && text === '' ? { type } : { type, reason: text };
  } else if (type === 'content' && !isError) {
    out = { type, value: encodeContent(text, { value: ro?.value }, 'value', TEXT, textPart) };
  }
  out ??= { type: isError ? 'error-text' : 'text', value: text };
  return withExtras(out, ro?.extra);
}

// ---- assistant content

function isCallPart(p: unknown): p is Obj & { toolCallId: string; toolName: string } {
  return isObj(p) && p.type === 'tool-call' && p.providerExecuted !== true && typeof p.toolCallId === 'string' && p.toolCallId !== '' && typeof p.toolName === 'string' && p.toolName !== '';
}

/**
 * A tool call's `input` as polestar arguments: the value when it is lossless JSON,
 * otherwise text standing for it (so executing the call answers `INVALID_ARGS`). Never throws.
 */
function argumentsOf(input: unknown): JsonValue {
  try {
    // `undefined` object properties are left out, as JSON (and the SDK) writes them
    return snapshotJson(withoutUndefined(input), 'tool-call input', 'input');
  } catch {
    try {
      return JSON.stringify(input) ?? '';
    } catch {
      return '';
    }
  }
}

function isCallPlaceholder(p: unknown): p is Obj {
  return isObj(p) && p.type === 'tool-call' && !('toolCallId' in p);
}

function callPart(c: ChatToolCall, extras: unknown): Obj {
  return withExtras({ type: 'tool-call', toolCallId: c.callId, toolName: c.name, input: thawJson(c.arguments) }, extras);
}

function assistantContent(text: string, calls: readonly ChatToolCall[] | undefined, layout: unknown): unknown {
  if (!Array.isArray(layout)) {
    if (calls === undefined || calls.length === 0) return text;
    return [...(text === '' ? [] : [textPart(text)]), ...calls.map((c) => callPart(c, undefined))];
  }
  const lengths = layout.filter((p) => isPlaceholder(p, TEXT)).map((p) => (p as { text: number }).text);
  const pieces = splitJoined(text, lengths);
  const callList = calls ?? [];
  const pairCalls = layout.filter(isCallPlaceholder).length === callList.length;
  const out: unknown[] = [];
  let t = 0;
  let c = 0;
  let placed = false;
  for (const p of layout as unknown[]) {
    if (isPlaceholder(p, TEXT)) {
      if (pieces !== undefined) out.push({ ...p, text: pieces[t++] });
      else if (!placed) {
        placed = true;
        out.push({ ...p, text });
      }
    } else if (isCallPlaceholder(p)) {
      if (pairCalls) out.push(callPart(callList[c++], p));
    } else out.push(p);
  }
  if (pieces === undefined && !placed && text !== '') {
    const firstCall = out.findIndex((b) => isObj(b) && b.type === 'tool-call');
    out.splice(firstCall === -1 ? out.length : firstCall, 0, textPart(text));
  }
  if (!pairCalls) out.push(...callList.map((call) => callPart(call, undefined)));
  return out;
}

// ---- the converters

/**
 * A polestar conversation as AI SDK `ModelMessage[]`, for `generateText({ messages })` /
 * `streamText({ messages })`. An assistant's `toolCalls` become `tool-call` parts after
 * its text; tool messages become `tool-result` parts (text, or `error-text` when
 * `isError`), consecutive ones in one tool message, each carrying the name of the tool
 * the earlier assistant call named. What {@link fromAiSdkMessages} kept in `meta.aiSdk`
 * (images, files, reasoning, provider options, part order and grouping, …) is restored,
 * so `toAiSdkMessages(fromAiSdkMessages(m))` deep-equals `m`. A message's other `meta`
 * (and an empty `toolCalls`) travels in `providerOptions.polestar`, which providers
 * ignore, so `fromAiSdkMessages(toAiSdkMessages(c))` gives `c` back (a missing `isError`
 * and `isError: false` being the same).
 *
 * @throws TypeError for an invalid message, and for a tool message whose call no earlier
 *   assistant message made (the AI SDK needs its tool name).
 */
export function toAiSdkMessages(messages: readonly ChatMessage[]): ModelMessage[] {
  const where0 = 'toAiSdkMessages(messages)';
  if (!Array.isArray(messages)) throw new TypeError(`${where0}: messages must be an array of chat messages, got ${describeValue(messages)}.`);
  const list = (messages as readonly unknown[]).map((m, i) => snapshotChatMessage(m, `${where0}: messages[${i}]`));
  const out: Obj[] = [];
  const names = new Map<string, string>();
  let prev: ChatMessage | undefined;
  list.forEach((m, i) => {
    const r = residualOf(m, KEY);
    const stash = stashOf(m);
    if (isObj(r.message)) {
      out.push(r.message);
      prev = m;
      return;
    }
    switch (m.role) {
      case 'system':
        out.push(withStash(withExtras({ role: 'system', content: m.content }, r.extra), stash));
        break;
      case 'user':
        out.push(withStash(withExtras({ role: 'user', content: encodeContent(m.content, r, 'content', TEXT, textPart) }, r.extra), stash));
        break;
      case 'assistant':
        for (const c of m.toolCalls ?? []) names.set(c.callId, c.name);
        out.push(withStash(withExtras({ role: 'assistant', content: assistantContent(m.content, m.toolCalls, r.content) }, r.extra), stash));
        break;
      case 'tool': {
        const toolName = typeof r.toolName === 'string' ? r.toolName : names.get(m.callId);
        if (toolName === undefined) {
          throw new TypeError(
            `${where0}: messages[${i}] answers the call "${m.callId}", but no earlier assistant message made that call, so its tool name ` +
              '(which the AI SDK needs) is unknown; keep the assistant message that made the call before its result.',
          );
        }
        const part = withStash(withExtras({ type: 'tool-result', toolCallId: m.callId, toolName, output: outputFor(m, isObj(r.output) ? r.output : undefined) }, r.part), stash);
        const parts = [...(Array.isArray(r.before) ? r.before : []), part, ...(Array.isArray(r.after) ? r.after : [])];
        const last = out.at(-1);
        if (prev?.role === 'tool' && r.split !== true && last?.role === 'tool' && Array.isArray(last.content)) last.content.push(...parts);
        else out.push(withExtras({ role: 'tool', content: parts }, r.extra));
        break;
      }
    }
    prev = m;
  });
  // A detached copy, then the binary data and URLs restored.
  return (thawJson(out as unknown as JsonValue) as unknown as Obj[]).map(decodeMessage) as unknown as ModelMessage[];
}

function decodeMessage(m: Obj): Obj {
  return Array.isArray(m.content) ? { ...m, content: decodeParts(m.content) } : m;
}

/**
 * AI SDK `ModelMessage[]` (e.g. `result.response.messages`, or the `messages` you sent)
 * as a polestar conversation, for `ConversationHistory`. An assistant message becomes one
 * assistant message (its text parts joined with a newline, its `tool-call` parts as
 * `toolCalls`); a tool message becomes one tool message per `tool-result` part (`isError`
 * for `error-text`, `error-json` and `execution-denied`; JSON output as its text). Parts
 * polestar does not model (images, files, reasoning, approvals, provider-executed tools,
 * provider options, the order and grouping of parts) are kept in `meta.aiSdk`, binary
 * data as `{ $bytes: <base64>, as }` and URLs as `{ $url }`, for {@link toAiSdkMessages}.
 * A tool call's `input` becomes its `arguments` as is (a string is the model's raw text:
 * executing it answers `INVALID_ARGS`; `undefined` object properties of an input or of a
 * JSON output are left out, as JSON writes them); a call with an empty id or name, and a result
 * without a call id, are kept as parts instead of becoming calls or results.
 *
 * @throws TypeError naming the message for one that is not an AI SDK message.
 */
export function fromAiSdkMessages(messages: readonly ModelMessage[]): ChatMessage[] {
  const where0 = 'fromAiSdkMessages(messages)';
  if (!Array.isArray(messages)) throw new TypeError(`${where0}: messages must be an array of AI SDK messages (ModelMessage[]), got ${describeValue(messages)}.`);
  const out: ChatMessage[] = [];
  const names = new Map<string, string>();
  const push = (m: Obj, r: Obj, stash: Stash | undefined, where: string): void => {
    out.push(snapshotChatMessage({ ...m, ...metaFor(stash, r) }, where));
  };
  Array.from(messages as readonly unknown[]).forEach((raw, i) => {
    const where = `${where0}: messages[${i}]`;
    if (!isObj(raw)) throw new TypeError(`${where} must be a message object { role, content }, got ${describeValue(raw)}.`);
    // The content's parts are copied by encodeParts (which needs the binary values as they are).
    const msg: Obj = { ...(localCopy(extrasOf(raw, ['content']), 0) as Obj), ...('content' in raw ? { content: raw.content } : {}) };
    const extras = extrasOf(msg, ['role', 'content']);
    const carrier = (): void => push({ role: 'user', content: '' }, { message: { ...msg, content: Array.isArray(msg.content) ? encodeParts(msg.content, where) : msg.content } }, undefined, where);
    switch (msg.role) {
      case 'system':
      case 'user':
      case 'assistant': {
        const split = splitStash(extras);
        let stash = split.stash;
        const rest = split.rest;
        const r: Obj = {};
        const calls: ChatToolCall[] = [];
        let content: string;
        if (typeof msg.content === 'string') content = msg.content;
        else if (Array.isArray(msg.content) && msg.role !== 'system') {
          const parts = encodeParts(msg.content, where);
          if (msg.role === 'user') content = decodeContent(parts, TEXT, r, 'content', where);
          else {
            const texts: string[] = [];
            r.content = parts.map((p) => {
              if (isTextPart(p, TEXT)) {
                texts.push(p.text);
                return { ...p, text: p.text.length };
              }
              if (isCallPart(p)) {
                calls.push({ callId: p.toolCallId, name: p.toolName, arguments: argumentsOf(p.input) });
                return extrasOf(p, ['toolCallId', 'toolName', 'input']);
              }
              return p;
            });
            content = texts.join(TEXT_JOIN);
            // Keep the layout only when polestar's own rendering would not give the same parts.
            if (calls.length > 0 && jsonEqual(parts, assistantContent(content, calls, undefined))) delete r.content;
          }
        } else throw new TypeError(`${where}: content must be a string${msg.role === 'system' ? '' : ' or an array of parts'}, got ${describeValue(msg.content)}.`);
        if (Object.keys(rest).length > 0) r.extra = rest;
        const emptyCalls = stash?.emptyToolCalls === true;
        if (!stashFits(stash, r) || (emptyCalls && (msg.role !== 'assistant' || calls.length > 0))) {
          stash = undefined;
          if (Object.keys(extras).length > 0) r.extra = extras;
        }
        const m: Obj = { role: msg.role, content };
        if (calls.length > 0 || (msg.role === 'assistant' && stash?.emptyToolCalls === true)) m.toolCalls = calls;
        for (const c of calls) names.set(c.callId, c.name);
        push(m, r, stash, where);
        break;
      }
      case 'tool': {
        if (!Array.isArray(msg.content)) throw new TypeError(`${where}: content must be an array of tool-result parts, got ${describeValue(msg.content)}.`);
        const parts = encodeParts(msg.content as unknown[], where);
        const isResult = (p: unknown): p is Obj & { toolCallId: string; toolName: string } =>
          isObj(p) && p.type === 'tool-result' && typeof p.toolCallId === 'string' && p.toolCallId !== '' && typeof p.toolName === 'string' && isObj(p.output);
        const results = parts.flatMap((p, j) => (isResult(p) ? [j] : []));
        if (results.length === 0) {
          carrier();
          break;
        }
        results.forEach((j, k) => {
          const p = parts[j] as Obj & { toolCallId: string; toolName: string };
          const pw = `${where}.content[${j}]`;
          const r: Obj = {};
          const first = k === 0;
          const before = parts.slice(first ? 0 : results[k - 1] + 1, j);
          if (before.length > 0) r.before = before;
          if (k === results.length - 1 && j + 1 < parts.length) r.after = parts.slice(j + 1);
          if (first && out.at(-1)?.role === 'tool') r.split = true;
          if (first && Object.keys(extras).length > 0) r.extra = extras;
          const o = outputOf(p.output, pw);
          if (o.residual !== undefined) r.output = o.residual;
          if (names.get(p.toolCallId) !== p.toolName) r.toolName = p.toolName;
          const split = splitStash(extrasOf(p, ['type', 'toolCallId', 'toolName', 'output']));
          let stash = split.stash;
          if (Object.keys(split.rest).length > 0) r.part = split.rest;
          if (!stashFits(stash, r) || stash?.emptyToolCalls === true) {
            stash = undefined;
            const all = extrasOf(p, ['type', 'toolCallId', 'toolName', 'output']);
            if (Object.keys(all).length > 0) r.part = all;
          }
          const m: Obj = { role: 'tool', callId: p.toolCallId, content: o.content };
          if (o.isError === true) m.isError = true;
          push(m, r, stash, pw);
        });
        break;
      }
      default:
        throw new TypeError(`${where}: role must be an AI SDK message role (system, user, assistant, tool), got ${describeValue(msg.role)}.`);
    }
  });
  return out;
}
