/**
 * @internal Wake-ups of the session stores: the in-process hub that delivers them to the
 * watchers of one store object, the source that tells a SQL store where they come from (a
 * PostgreSQL `LISTEN` connection, or nothing: the callers poll), and the small JSON payload
 * they travel in between processes.
 */
import { errorText } from '../../../util/error-text.js';
import type { StoreWake, StoreWatch } from '../contract.js';

/** @internal The one notification channel of the SQL stores. */
export const WAKE_CHANNEL = 'polestar_wake';

/** @internal PostgreSQL refuses a NOTIFY payload of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7999;

/**
 * @internal The payload of a wake-up: small JSON (`k` kind, `s` session, `o` owner). One too
 * long for a notification (ids of many multi-byte characters) travels as a resync.
 */
export function encodeWake(wake: StoreWake): string {
  const text =
    wake.kind === 'resync'
      ? '{"k":"resync"}'
      : JSON.stringify(wake.kind === 'release' ? { k: wake.kind, s: wake.sessionId } : { k: wake.kind, s: wake.sessionId, o: wake.owner });
  return Buffer.byteLength(text, 'utf8') > MAX_PAYLOAD_BYTES ? '{"k":"resync"}' : text;
}

/** @internal The wake-up a payload stands for, or `undefined` for one this version did not write (anyone may notify the channel). */
export function decodeWake(text: unknown): StoreWake | undefined {
  if (typeof text !== 'string' || text.length > MAX_PAYLOAD_BYTES) return undefined;
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (o === null || typeof o !== 'object') return undefined;
  const { k, s, o: owner } = o as { k?: unknown; s?: unknown; o?: unknown };
  if (k === 'resync') return { kind: 'resync' };
  if (typeof s !== 'string' || s.length === 0) return undefined;
  if (k === 'release') return { kind: 'release', sessionId: s };
  if ((k === 'handoff' || k === 'cancel') && typeof owner === 'string' && owner.length > 0) return { kind: k, sessionId: s, owner };
  return undefined;
}

/**
 * @internal Where a SQL store's wake-ups from other processes come from. `local`: the store
 * delivers its own wake-ups in-process too (nothing else brings them back to it).
 */
export interface WakeSource {
  /** `'notify'` while wake-ups of other processes arrive by themselves; `'poll'` otherwise. */
  readonly mode: 'notify' | 'poll';
  /** True when the store must deliver its own wake-ups to its watchers itself. */
  readonly local: boolean;
  /** Called at every `watch()`: starts listening (idempotent). */
  start(): void;
  /** Stops listening; resolves once its connection is closed. */
  close(): Promise<void>;
}

interface Subscriber {
  readonly onWake: (wake: StoreWake) => void;
  readonly onError: ((err: Error) => void) | undefined;
  /** Set once a subscription error was reported: it is in 'poll' mode from then on. */
  failed: boolean;
  closed: boolean;
}

/**
 * @internal The watchers of one store object. Wake-ups are delivered in a microtask, never
 * inside the call that caused them; a watcher that throws is reported through its `onError`
 * and never reaches the caller of the store.
 */
export class WakeHub {
  /** The `pollMs` every subscription reports. */
  readonly pollMs: number;
  readonly #mode: () => 'notify' | 'poll';
  readonly #subs = new Set<Subscriber>();

  /** @param mode - the mode of a subscription that has not failed. */
  constructor(pollMs: number, mode: () => 'notify' | 'poll') {
    this.pollMs = pollMs;
    this.#mode = mode;
  }

  /** How many subscriptions are open. */
  get size(): number {
    return this.#subs.size;
  }

  /** A new subscription; `closed`: it starts closed, in 'poll' mode (a closed store), with `closedError` reported. */
  subscribe(onWake: (wake: StoreWake) => void, onError: ((err: Error) => void) | undefined, closedError?: Error): StoreWatch {
    const sub: Subscriber = { onWake, onError, failed: false, closed: false };
    if (closedError === undefined) this.#subs.add(sub);
    else {
      sub.closed = true;
      sub.failed = true;
      queueMicrotask(() => report(sub, closedError));
    }
    const mode = this.#mode;
    const subs = this.#subs;
    return {
      get mode(): 'notify' | 'poll' {
        return sub.failed || sub.closed ? 'poll' : mode();
      },
      pollMs: this.pollMs,
      close: async (): Promise<void> => {
        sub.closed = true;
        subs.delete(sub);
      },
    };
  }

  /** Delivers `wake` to every open subscription, in a microtask. */
  emit(wake: StoreWake): void {
    if (this.#subs.size === 0) return;
    const subs = [...this.#subs];
    queueMicrotask(() => {
      for (const sub of subs) {
        if (sub.closed) continue;
        try {
          sub.onWake(wake);
        } catch (err) {
          report(sub, err instanceof Error ? err : new Error(`a store.watch() onWake callback threw: ${errorText(err)}`));
        }
      }
    });
  }

  /** Reports a subscription error to every open subscription that has not reported one, turning it to 'poll' mode. */
  fail(err: Error): void {
    for (const sub of this.#subs) {
      if (sub.failed) continue;
      sub.failed = true;
      queueMicrotask(() => report(sub, err));
    }
  }

  /** Turns every failed subscription back to the hub's mode (the source works again). */
  recover(): void {
    for (const sub of this.#subs) sub.failed = false;
  }

  /** Closes every subscription (the store closed). */
  closeAll(): void {
    for (const sub of this.#subs) sub.closed = true;
    this.#subs.clear();
  }
}

/** Calls `onError`, which must not reach the store's caller either. */
function report(sub: Subscriber, err: Error): void {
  if (sub.onError === undefined) return;
  try {
    sub.onError(err);
  } catch {
    // An onError that throws has nowhere further to report to.
  }
}
