/**
 * `TurnLog`: the local of every durable turn context, where a turn records what
 * happened besides its history changes (tool results, usage, notes). Its events are
 * written with the turn: committed with it, or kept as aborted when it fails.
 */
import { describeValue } from '../context/token.js';
import type { ownClass } from '../system/own-class.js';
import { snapshotJson, type JsonValue } from '../util/lossless-json.js';
import { HISTORY_KIND_PREFIX } from './store/contract.js';

/** @internal Where a {@link TurnLog} writes: the turn it belongs to. */
export interface TurnSink {
  /** The session, for messages. */
  readonly sessionId: string;
  /** False once the turn's function returned (or failed): nothing more is recorded. */
  readonly accepting: boolean;
  /** Buffers a checked event. */
  record(kind: string, body: JsonValue): void;
  /** Writes the buffered events now (fenced). */
  flush(): Promise<void>;
}

/**
 * The events of one durable turn. `turnCtx.get(TurnLog)` (or `ResMut(TurnLog)` in a
 * system) in a turn of a `DurableSession`:
 *
 * - `record(kind, body)` buffers an event (`body` is snapshotted as lossless JSON);
 * - `flush()` writes the events buffered so far at once, fenced by the session's lease
 *   (they are `pending` until the turn ends, and survive a crash as the interrupted
 *   turn's events).
 *
 * When the turn commits, its remaining events are written in the commit's transaction;
 * when it fails, they are written with the *aborted* record.
 *
 * @example
 * ```ts
 * import assert from 'node:assert/strict';
 * import { AgentsPlugin, Server, Sessions, SessionsPlugin, TurnLog } from 'polestar-di';
 *
 * const server = new Server().addPlugins(new AgentsPlugin(), new SessionsPlugin());
 * await server.finish();
 * const sessions = server.createContext().get(Sessions);
 * const durable = await sessions.create({ agentId: 'a', sessionId: 's' });
 * await durable.turn(async (turnCtx, session) => {
 *   session.history.append({ role: 'user', content: 'hi' });
 *   turnCtx.get(TurnLog).record('usage', { inputTokens: 12 });
 * });
 * const kinds: string[] = [];
 * for await (const e of sessions.events('s')) kinds.push(`${e.kind} ${e.status}`);
 * assert.deepEqual(kinds, ['history/append committed', 'usage committed']);
 * await server.dispose();
 * ```
 */
export class TurnLog {
  /** Type-level brand of polestar's own classes: `Res<T>` hands this class over as itself (never present at run time). */
  declare readonly [ownClass]: true;
  readonly #sink: TurnSink;

  /** @internal Made by `DurableSession.turn`. */
  constructor(sink: TurnSink) {
    this.#sink = sink;
  }

  /**
   * Buffers an event of this turn.
   *
   * @param kind - what happened, e.g. `tool/result`: a non-empty string (at most 1024
   *   characters) not starting with `history/`, which is reserved for history changes.
   * @param body - lossless JSON, snapshotted now (later changes to it change nothing).
   * @throws TypeError for a bad kind or body, or once the turn's function has returned.
   */
  record(kind: string, body: JsonValue): void {
    const sink = this.#sink;
    if (typeof kind !== 'string' || kind.length === 0 || kind.length > 1024) {
      throw new TypeError(`TurnLog.record(kind, body) in session "${sink.sessionId}": kind must be a non-empty string of at most 1024 characters, got ${describeValue(kind)}.`);
    }
    if (kind.startsWith(HISTORY_KIND_PREFIX)) {
      throw new TypeError(
        `TurnLog.record("${kind}") in session "${sink.sessionId}": kinds starting with "${HISTORY_KIND_PREFIX}" are the history's own; change the history with session.history.append/replace, or pick another kind.`,
      );
    }
    if (!sink.accepting) {
      throw new TypeError(`TurnLog.record("${kind}") in session "${sink.sessionId}": the turn has ended; record events from inside its turn function.`);
    }
    sink.record(kind, snapshotJson(body, `TurnLog.record("${kind}", body)`, 'body'));
  }

  /**
   * Writes the events buffered so far (and the turn's history changes so far) now, in one
   * fenced write. Rejects with `LEASE_LOST` when the session lost its lease, with
   * `SESSION_CLOSED` once the turn ended; a store failure leaves the events buffered.
   */
  flush(): Promise<void> {
    return this.#sink.flush();
  }
}
