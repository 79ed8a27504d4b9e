/**
 * SPEC §11.4: the ChatMessage union and ConversationHistory (append / replace, frozen
 * messages, validation that leaves the history unchanged), plus contract C7's observer.
 */
import fc from 'fast-check';
import { ConversationHistory, type ChatMessage } from '../../src/index.js';
import type { HistoryChange, HistoryMark } from '../../src/conversation/conversation-history.js';
import { probe } from '../../src/testing/probe.js';

const user = (content: string): ChatMessage => ({ role: 'user', content });

describe('ChatMessage union', () => {
  test('every role is accepted, snapshotted and deep-frozen; meta is kept verbatim', () => {
    const meta = { anthropic: { thinking: [{ type: 'thinking', thinking: 'hmm', signature: 's' }] }, n: 1, ok: null };
    const call = { callId: 'c1', name: 'search', arguments: { q: 'tides', n: [1, 2] } };
    const msgs: ChatMessage[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi', meta: 'free text' },
      { role: 'assistant', content: '', toolCalls: [call], meta },
      { role: 'tool', callId: 'c1', content: 'Error: boom', isError: true },
      { role: 'tool', callId: 'c1', content: 'ok', isError: false },
      { role: 'assistant', content: 'done' },
    ];
    const h = new ConversationHistory();
    for (const m of msgs) h.append(m);
    expect(h.messages).toEqual(msgs);
    expect(h.length).toBe(6);
    const a = h.messages[2] as Extract<ChatMessage, { role: 'assistant' }>;
    expect(a).not.toBe(msgs[2]);
    expect(a.meta).not.toBe(meta);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(a.toolCalls)).toBe(true);
    expect(Object.isFrozen(a.toolCalls?.[0])).toBe(true);
    expect(Object.isFrozen(a.toolCalls?.[0].arguments)).toBe(true);
    expect(Object.isFrozen((a.meta as { anthropic: object }).anthropic)).toBe(true);
    // later changes to the caller's objects change nothing
    call.arguments.q = 'changed';
    meta.n = 2;
    expect(a.toolCalls?.[0].arguments).toEqual({ q: 'tides', n: [1, 2] });
    expect((a.meta as { n: number }).n).toBe(1);
  });

  test("arguments may be the model's raw text (a string) when it was not valid JSON", () => {
    const h = new ConversationHistory();
    h.append({ role: 'assistant', content: '', toolCalls: [{ callId: 'c', name: 't', arguments: '{"q": "unterminated' }] });
    expect((h.messages[0] as Extract<ChatMessage, { role: 'assistant' }>).toolCalls?.[0].arguments).toBe('{"q": "unterminated');
  });

  test('known optional fields given as undefined are left out', () => {
    const h = new ConversationHistory();
    h.append({ role: 'assistant', content: 'x', toolCalls: undefined, meta: undefined });
    h.append({ role: 'tool', callId: 'c', content: 'y', isError: undefined });
    expect(Object.keys(h.messages[0])).toEqual(['role', 'content']);
    expect(Object.keys(h.messages[1])).toEqual(['role', 'callId', 'content']);
  });

  test("the old { role: 'tool', content, name } shape is refused with a message saying to add callId", () => {
    const h = new ConversationHistory();
    expect(() => h.append({ role: 'tool', name: 'search', content: 'r' } as never)).toThrow(TypeError);
    expect(() => h.append({ role: 'tool', name: 'search', content: 'r' } as never)).toThrow(/add callId/);
    expect(() => h.append({ role: 'tool', callId: 'c', name: 'search', content: 'r' } as never)).toThrow(/unexpected property "name".*drop name/);
  });

  test.each([
    ['a non-object', 'hello', /must be a chat message object/],
    ['null', null, /must be a chat message object/],
    ['an array', [], /must be a chat message object/],
    ['a class instance', new (class Msg { role = 'user'; content = 'x'; })(), /plain object/],
    ['an unknown role', { role: 'function', content: 'x' }, /role must be one of/],
    ['a missing role', { content: 'x' }, /role must be one of/],
    ['non-string content', { role: 'user', content: ['x'] }, /content must be a string/],
    ['missing content', { role: 'assistant', toolCalls: [] }, /content must be a string/],
    ['an extra property', { role: 'user', content: 'x', name: 'bob' }, /unexpected property "name" on a user message/],
    ['an extra property set to undefined', { role: 'user', content: 'x', extra: undefined }, /unexpected property "extra"/],
    ['toolCalls on a user message', { role: 'user', content: 'x', toolCalls: [] }, /unexpected property "toolCalls"/],
    ['a symbol key', { role: 'user', content: 'x', [Symbol('s')]: 1 }, /symbol key/],
    ['toolCalls not an array', { role: 'assistant', content: '', toolCalls: {} }, /toolCalls must be an array/],
    ['a tool call with an empty callId', { role: 'assistant', content: '', toolCalls: [{ callId: '', name: 't', arguments: {} }] }, /toolCalls\[0\]: callId must be a non-empty string/],
    ['a tool call without a name', { role: 'assistant', content: '', toolCalls: [{ callId: 'c', arguments: {} }] }, /name must be a non-empty string/],
    ['a tool call without arguments', { role: 'assistant', content: '', toolCalls: [{ callId: 'c', name: 't' }] }, /arguments is missing/],
    ['a tool call with an extra property', { role: 'assistant', content: '', toolCalls: [{ callId: 'c', name: 't', arguments: {}, type: 'function' }] }, /unexpected property "type"/],
    ['arguments that are not lossless JSON', { role: 'assistant', content: '', toolCalls: [{ callId: 'c', name: 't', arguments: { n: NaN } }] }, /losslessly JSON-serializable: arguments\.n/],
    ['a tool message without callId', { role: 'tool', content: 'x' }, /callId must be a non-empty string/],
    ['a non-boolean isError', { role: 'tool', callId: 'c', content: 'x', isError: 'yes' }, /isError must be a boolean/],
    ['meta that is not lossless JSON', { role: 'user', content: 'x', meta: { f: () => 1 } }, /losslessly JSON-serializable: meta\.f is a function/],
    ['meta with a Date', { role: 'user', content: 'x', meta: new Date(0) }, /Date instance/],
    ['a throwing getter', { role: 'user', get content(): string { throw new Error('boom'); } }, /reading "content" threw: boom/],
  ])('%s is refused with a TypeError and leaves the history unchanged', (_label, bad, pattern) => {
    const h = new ConversationHistory([user('a')]);
    const before = h.messages;
    expect(() => h.append(bad as never)).toThrow(TypeError);
    expect(() => h.append(bad as never)).toThrow(pattern);
    expect(() => h.replace(0, 1, [user('b'), bad as never])).toThrow(TypeError);
    expect(h.messages).toBe(before);
    expect(h.messages).toEqual([user('a')]);
  });
});

describe('ConversationHistory', () => {
  test('messages is a frozen array replaced on every change; earlier reads are stable snapshots', () => {
    const h = new ConversationHistory();
    const m0 = h.messages;
    expect(Object.isFrozen(m0)).toBe(true);
    expect(h.append(user('a'))).toBe(1);
    const m1 = h.messages;
    expect(m1).not.toBe(m0);
    expect(Object.isFrozen(m1)).toBe(true);
    expect(m0).toEqual([]);
    expect(() => (m1 as ChatMessage[]).push(user('x'))).toThrow(TypeError);
    h.replace(0, 1, [user('b')]);
    expect(m1).toEqual([user('a')]);
    expect(h.messages).toEqual([user('b')]);
  });

  test('replace(start, end, messages) is splice(start, end - start, ...messages) and returns what it removed', () => {
    const h = new ConversationHistory(['a', 'b', 'c', 'd'].map(user));
    expect(h.replace(1, 3, [user('x')])).toEqual([user('b'), user('c')]);
    expect(h.messages).toEqual(['a', 'x', 'd'].map(user));
    expect(h.replace(3, 3, [user('e'), user('f')])).toEqual([]);
    expect(h.messages.map((m) => m.content)).toEqual(['a', 'x', 'd', 'e', 'f']);
    expect(h.replace(0, 5, [])).toEqual(['a', 'x', 'd', 'e', 'f'].map(user));
    expect(h.messages).toEqual([]);
  });

  test.each([
    [-1, 0, RangeError],
    [0, 3, RangeError],
    [2, 1, RangeError],
    [0.5, 1, TypeError],
    ['0', 1, TypeError],
    [0, NaN, TypeError],
  ])('replace(%p, %p) is refused and leaves the history unchanged', (start, end, type) => {
    const h = new ConversationHistory([user('a'), user('b')]);
    const before = h.messages;
    expect(() => h.replace(start as number, end as number, [user('x')])).toThrow(type);
    expect(h.messages).toBe(before);
  });

  test('replace refuses a non-array list', () => {
    const h = new ConversationHistory();
    expect(() => h.replace(0, 0, user('x') as never)).toThrow(/messages must be an array of chat messages/);
  });

  test('the constructor validates its messages', () => {
    expect(() => new ConversationHistory([{ role: 'tool', name: 'x', content: 'y' } as never])).toThrow(/add callId/);
    expect(() => new ConversationHistory('hi' as never)).toThrow(/must be an array of chat messages/);
    expect(new ConversationHistory([user('a')]).messages).toEqual([user('a')]);
  });

  test('messages of one history can be given to another as they are', () => {
    const a = new ConversationHistory([user('a'), { role: 'assistant', content: '', toolCalls: [{ callId: 'c', name: 't', arguments: {} }] }]);
    const b = new ConversationHistory(a.messages);
    expect(b.messages[1]).toBe(a.messages[1]);
    b.replace(0, 0, a.messages);
    expect(b.messages).toEqual([...a.messages, ...a.messages]);
  });
});

describe('ConversationHistory snapshots (append is O(1), messages is made on read)', () => {
  test('an array read earlier stays as it was, frozen, through later appends and replaces (in place or not)', () => {
    const h = new ConversationHistory();
    const seen: { arr: readonly ChatMessage[]; want: string[] }[] = [];
    const check = (): void => {
      for (const { arr, want } of seen) {
        expect(Object.isFrozen(arr)).toBe(true);
        expect(arr.map((m) => m.content)).toEqual(want);
      }
    };
    for (let i = 0; i < 50; i++) {
      h.append(user(`m${i}`));
      if (i % 7 === 0) seen.push({ arr: h.messages, want: h.messages.map((m) => m.content) });
      check();
    }
    h.replace(40, 45, [user('x')]); // in place: no mark
    h.replace(0, 10, [user('summary')]); // compaction of a prefix
    h.replace(h.length, h.length, [user('tail')]);
    check();
    expect(h.messages.map((m) => m.content)).toEqual(['summary', ...Array.from({ length: 30 }, (_, i) => `m${i + 10}`), 'x', 'm45', 'm46', 'm47', 'm48', 'm49', 'tail']);
    expect(() => (seen[2].arr as ChatMessage[]).push(user('y'))).toThrow(TypeError);
    expect(() => ((seen[2].arr as ChatMessage[])[0] = user('y'))).toThrow(TypeError);
  });

  test('reading twice without a change returns the same array; any change (even an empty replace) makes a new one', () => {
    const h = new ConversationHistory([user('a')]);
    const a = h.messages;
    expect(h.messages).toBe(a);
    expect(h.length).toBe(1);
    h.append(user('b'));
    expect(h.length).toBe(2); // length does not need a read of messages
    const b = h.messages;
    expect(b).not.toBe(a);
    expect(h.messages).toBe(b);
    h.replace(1, 1, []);
    expect(h.messages).not.toBe(b);
    expect(h.messages).toEqual(b);
    const e = new ConversationHistory();
    const e0 = e.messages;
    e.replace(0, 0, []);
    expect(e.messages).not.toBe(e0);
    expect(Object.isFrozen(e.messages)).toBe(true);
  });

  test('the messages array is never the history\'s own store: freezing, mutating or keeping it changes nothing', () => {
    const h = new ConversationHistory([user('a')]);
    const a = h.messages;
    h.append(user('b'));
    expect(a).toEqual([user('a')]);
    expect(a.length).toBe(1);
    // a message appended is the same frozen object in every later snapshot
    expect(h.messages[1]).toBe(h.messages[1]);
    h.append(user('c'));
    const c = h.messages;
    expect(c[0]).toBe(a[0]);
  });

  test('replace returns the removed messages as a frozen array, also when it changes the history in place', () => {
    const h = new ConversationHistory(['a', 'b', 'c'].map(user));
    const removed = h.replace(1, 3, [user('x')]);
    expect(removed).toEqual([user('b'), user('c')]);
    expect(Object.isFrozen(removed)).toBe(true);
    probe.markHistory(h);
    const removed2 = h.replace(0, 1, []); // below the mark: copies
    expect(removed2).toEqual([user('a')]);
    expect(Object.isFrozen(removed2)).toBe(true);
    expect(h.messages).toEqual([user('x')]);
  });

  test('replace takes any number of messages (no spread into a call)', () => {
    const m = new ConversationHistory([user('same')]).messages[0]; // already checked: reused as is
    const many = new Array<ChatMessage>(200_000).fill(m);
    const h = new ConversationHistory([user('a'), user('b')]);
    h.replace(1, 1, many);
    expect(h.length).toBe(200_002);
    expect(h.messages[200_001]).toEqual(user('b'));
    const marked = new ConversationHistory([user('a'), user('b')]);
    probe.markHistory(marked);
    marked.replace(0, 1, many);
    expect(marked.length).toBe(200_001);
  });
});

describe('ConversationHistory marks (internal, for durable sessions)', () => {
  test('restoring goes back to the mark after appends, in place, and tells no observer', () => {
    const h = new ConversationHistory([user('a')]);
    const changes: HistoryChange[] = [];
    probe.observeHistory(h, { check: () => undefined, changed: (c) => changes.push(c) });
    const mark = probe.markHistory(h);
    const before = h.messages;
    h.append(user('b'));
    h.append(user('c'));
    const mid = h.messages;
    probe.restoreHistory(h, mark);
    expect(h.messages).toEqual([user('a')]);
    expect(h.messages).not.toBe(before); // a change: a new array
    expect(mid).toEqual(['a', 'b', 'c'].map(user)); // earlier snapshots untouched
    expect(before).toEqual([user('a')]);
    expect(changes.map((c) => c.kind)).toEqual(['append', 'append']);
    h.append(user('d'));
    expect(h.messages).toEqual([user('a'), user('d')]);
    expect(mid).toEqual(['a', 'b', 'c'].map(user));
  });

  test('restoring after a replace below the mark, and with several marks, gives each mark\'s messages back', () => {
    const h = new ConversationHistory(['a', 'b'].map(user));
    const m2 = probe.markHistory(h);
    h.append(user('c'));
    h.append(user('d'));
    const m4 = probe.markHistory(h);
    h.replace(0, 3, [user('s')]); // compaction below both marks
    h.append(user('e'));
    probe.restoreHistory(h, m2);
    expect(h.messages).toEqual(['a', 'b'].map(user));
    h.append(user('x'));
    probe.restoreHistory(h, m4);
    expect(h.messages).toEqual(['a', 'b', 'c', 'd'].map(user));
    probe.restoreHistory(h, m2);
    h.append(user('y'));
    probe.restoreHistory(h, m4);
    expect(h.messages).toEqual(['a', 'b', 'c', 'd'].map(user));
    probe.restoreHistory(h, m4);
    expect(h.messages).toEqual(['a', 'b', 'c', 'd'].map(user));
  });

  test('going back to an earlier mark and appending again does not overwrite what a later mark names', () => {
    const h = new ConversationHistory(['a', 'b'].map(user));
    const m2 = probe.markHistory(h);
    h.append(user('c'));
    h.append(user('d'));
    const m4 = probe.markHistory(h);
    probe.restoreHistory(h, m2);
    h.append(user('x'));
    h.append(user('y'));
    expect(h.messages).toEqual(['a', 'b', 'x', 'y'].map(user));
    probe.restoreHistory(h, m4);
    expect(h.messages).toEqual(['a', 'b', 'c', 'd'].map(user));
    probe.restoreHistory(h, m2);
    expect(h.messages).toEqual(['a', 'b'].map(user));
  });

  test('restoring refuses a mark of another history', () => {
    const a = new ConversationHistory();
    const b = new ConversationHistory();
    expect(() => probe.restoreHistory(b, probe.markHistory(a))).toThrow(/another history/);
  });
});

describe('ConversationHistory observer (contract C7)', () => {
  test('check() runs after validation and before the change; a throwing check leaves the history unchanged', () => {
    const h = new ConversationHistory([user('a')]);
    const seen: string[] = [];
    let allow = false;
    probe.observeHistory(h, {
      check: () => {
        seen.push(`check:${h.length}`);
        if (!allow) throw new TypeError('a durable history changes only inside turn()');
      },
      changed: (c) => seen.push(`changed:${c.kind}:${h.length}`),
    });
    const before = h.messages;
    expect(() => h.append({ role: 'nope' } as never)).toThrow(/role must be one of/);
    expect(seen).toEqual([]); // invalid input never reaches check()
    expect(() => h.append(user('b'))).toThrow(/only inside turn/);
    expect(() => h.replace(0, 1, [])).toThrow(/only inside turn/);
    expect(h.messages).toBe(before);
    allow = true;
    h.append(user('b'));
    h.replace(0, 1, [user('z')]);
    expect(seen).toEqual(['check:1', 'check:1', 'check:1', 'changed:append:2', 'check:2', 'changed:replace:2']);
  });

  test('changed() receives the validated frozen messages', () => {
    const h = new ConversationHistory([user('a'), user('b')]);
    const changes: HistoryChange[] = [];
    probe.observeHistory(h, { check: () => undefined, changed: (c) => changes.push(c) });
    h.append({ role: 'tool', callId: 'c', content: 'r', isError: undefined });
    h.replace(0, 2, [user('s')]);
    expect(changes).toEqual([
      { kind: 'append', message: { role: 'tool', callId: 'c', content: 'r' } },
      { kind: 'replace', start: 0, end: 2, messages: [user('s')] },
    ]);
    const c0 = changes[0] as Extract<HistoryChange, { kind: 'append' }>;
    const c1 = changes[1] as Extract<HistoryChange, { kind: 'replace' }>;
    expect(c0.message).toBe(h.messages[1]);
    expect(Object.isFrozen(c1.messages)).toBe(true);
    expect(c1.messages[0]).toBe(h.messages[0]);
  });
});

describe('ConversationHistory model (fast-check)', () => {
  const validMessage = fc.oneof(
    fc.record({ role: fc.constantFrom('system' as const, 'user' as const), content: fc.string() }),
    fc.record({
      role: fc.constant('assistant' as const),
      content: fc.string(),
      toolCalls: fc.array(fc.record({ callId: fc.string({ minLength: 1 }), name: fc.string({ minLength: 1 }), arguments: fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown) }), { maxLength: 3 }),
    }, { requiredKeys: ['role', 'content'] }),
    fc.record({ role: fc.constant('tool' as const), callId: fc.string({ minLength: 1 }), content: fc.string(), isError: fc.boolean() }, { requiredKeys: ['role', 'callId', 'content'] }),
  );
  const invalidMessage = fc.constantFrom<unknown>(
    { role: 'tool', name: 'x', content: 'y' },
    { role: 'user', content: 1 },
    { role: 'assistant', content: '', toolCalls: [{ callId: '', name: 't', arguments: {} }] },
    { role: 'user', content: 'x', meta: { n: Infinity } },
    null,
  );
  const message = fc.oneof({ weight: 4, arbitrary: validMessage }, { weight: 1, arbitrary: invalidMessage });
  const op = fc.oneof(
    fc.record({ kind: fc.constant('append' as const), message }),
    fc.record({ kind: fc.constant('replace' as const), a: fc.nat(8), b: fc.nat(8), messages: fc.array(message, { maxLength: 3 }) }),
  );
  const markOp = fc.oneof(
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('append' as const), message: validMessage }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('replace' as const), a: fc.nat(8), b: fc.nat(8), messages: fc.array(validMessage, { maxLength: 3 }) }) },
    { weight: 2, arbitrary: fc.constant({ kind: 'read' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'mark' as const }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('restore' as const), which: fc.nat(5) }) },
  );

  test('appends, replaces, reads, marks and restores interleaved behave like a plain array; every read stays a frozen, unchanged snapshot', () => {
    fc.assert(
      fc.property(fc.array(markOp, { maxLength: 40 }), (ops) => {
        const h = new ConversationHistory();
        let model: unknown[] = [];
        const reads: { arr: readonly ChatMessage[]; want: unknown[] }[] = [];
        const marks: { mark: HistoryMark; want: unknown[] }[] = [];
        for (const o of ops) {
          if (o.kind === 'append') {
            expect(h.append(o.message as ChatMessage)).toBe(model.length + 1);
            model = [...model, o.message];
          } else if (o.kind === 'replace') {
            const start = Math.min(o.a, o.b, model.length);
            const end = Math.min(Math.max(o.a, o.b), model.length);
            const next = model.slice();
            expect(h.replace(start, end, o.messages as ChatMessage[])).toEqual(next.splice(start, end - start, ...o.messages));
            model = next;
          } else if (o.kind === 'read') {
            const arr = h.messages;
            expect(h.messages).toBe(arr);
            reads.push({ arr, want: model.slice() });
          } else if (o.kind === 'mark') {
            marks.push({ mark: probe.markHistory(h), want: model.slice() });
          } else if (marks.length > 0) {
            const m = marks[o.which % marks.length];
            probe.restoreHistory(h, m.mark);
            model = m.want.slice();
          }
          expect(h.length).toBe(model.length);
          for (const r of reads) {
            expect(Object.isFrozen(r.arr)).toBe(true);
            expect(r.arr).toEqual(r.want);
          }
        }
        expect(h.messages).toEqual(model);
        expect(Object.isFrozen(h.messages)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  test('append/replace behave like an array with splice; a refused change changes nothing', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 25 }), (ops) => {
        const h = new ConversationHistory();
        let model: unknown[] = [];
        for (const o of ops) {
          const before = h.messages;
          if (o.kind === 'append') {
            const ok = validStrict(o.message);
            if (ok) {
              expect(h.append(o.message as ChatMessage)).toBe(model.length + 1);
              model = [...model, o.message];
            } else {
              expect(() => h.append(o.message as ChatMessage)).toThrow(TypeError);
              expect(h.messages).toBe(before);
            }
          } else {
            const start = Math.min(o.a, o.b);
            const end = Math.max(o.a, o.b);
            const inRange = end <= model.length;
            const ok = o.messages.every(validStrict);
            if (inRange && ok) {
              const removed = h.replace(start, end, o.messages as ChatMessage[]);
              const next = model.slice();
              expect(removed).toEqual(next.splice(start, end - start, ...o.messages));
              model = next;
            } else {
              expect(() => h.replace(start, end, o.messages as ChatMessage[])).toThrow(inRange ? TypeError : RangeError);
              expect(h.messages).toBe(before);
            }
          }
          expect(h.messages).toEqual(model);
          expect(Object.isFrozen(h.messages)).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });
});

/** The model's own notion of a valid message, written independently of the implementation. */
function validStrict(m: unknown): boolean {
  if (m === null || typeof m !== 'object') return false;
  const o = m as Record<string, unknown>;
  if (typeof o.content !== 'string') return false;
  if ('meta' in o && !Number.isFinite((o.meta as { n?: number })?.n ?? 0)) return false;
  switch (o.role) {
    case 'system':
    case 'user':
      return Object.keys(o).every((k) => ['role', 'content', 'meta'].includes(k));
    case 'assistant':
      return (o.toolCalls === undefined || (Array.isArray(o.toolCalls) && o.toolCalls.every((c: { callId?: unknown; name?: unknown }) => typeof c.callId === 'string' && c.callId !== '' && typeof c.name === 'string' && c.name !== '')));
    case 'tool':
      return typeof o.callId === 'string' && o.callId !== '' && !('name' in o);
    default:
      return false;
  }
}
