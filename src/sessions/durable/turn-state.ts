/**
 * @internal One durable turn in flight: the events it buffered (history changes and
 * `TurnLog` records, written with its commit or its aborted record) and its `TurnLog`'s
 * sink, whose flushes run one after the other.
 */
import type { JsonValue } from '../../util/lossless-json.js';
import { SessionError } from '../errors.js';
import type { BegunAttempt, NewSessionEvent } from '../store/contract.js';
import { TurnLog, type TurnSink } from '../turn-log.js';

/** @internal An event a turn buffered. */
export interface BufferedEvent extends NewSessionEvent {
  /** True for a `TurnLog` event (written with an aborted record), false for a history change. */
  readonly log: boolean;
}

const noop = (): void => undefined;

/** @internal One turn in flight: its buffer and its `TurnLog`'s sink. */
export class TurnState implements TurnSink {
  /** False once the turn's function returned (or failed). */
  accepting = true;
  /** The attempt `begin` gave, once it did. */
  attempt: BegunAttempt | undefined;
  /** The error of a flush whose outcome is unknown (its events may be stored): the turn can not commit. */
  flushUnknown: unknown;
  /** True once a flush of this attempt was stored: its started record is durable from then on. */
  flushed = false;
  /** The events buffered and not yet flushed, in order. */
  readonly pending: BufferedEvent[] = [];
  #flushing: Promise<void> = Promise.resolve();
  /** The turn's `TurnLog` (a local of the turn context). */
  readonly log: TurnLog;
  /** The session, for messages. */
  readonly sessionId: string;
  readonly #flushWrite: (t: TurnState) => Promise<void>;

  /** @param flushWrite - writes what `pending` holds (one fenced `append`). */
  constructor(sessionId: string, flushWrite: (t: TurnState) => Promise<void>) {
    this.sessionId = sessionId;
    this.#flushWrite = flushWrite;
    this.log = new TurnLog(this);
  }

  /** Buffers a checked `TurnLog` event. */
  record(kind: string, body: JsonValue): void {
    this.pending.push({ kind, body, log: true });
  }

  /** Writes the buffered events after every flush started before (`SESSION_CLOSED` once the turn ended). */
  flush(): Promise<void> {
    if (!this.accepting) {
      return Promise.reject(
        new SessionError('SESSION_CLOSED', `TurnLog.flush() in session "${this.sessionId}": the turn has ended; its events are written with it.`, {
          sessionId: this.sessionId,
        }),
      );
    }
    const p = this.#flushing.then(() => this.#flushWrite(this));
    this.#flushing = p.catch(noop);
    return p;
  }

  /** Settles when every flush started so far has. */
  settled(): Promise<void> {
    return this.#flushing;
  }
}

/** @internal A buffered event as the store takes it. */
export function stripEvent(e: BufferedEvent): NewSessionEvent {
  return { kind: e.kind, body: e.body };
}

/** @internal The `TurnLog` events of `t` (written with an aborted record). */
export function logEvents(t: TurnState): NewSessionEvent[] {
  return t.pending.filter((e) => e.log).map(stripEvent);
}
