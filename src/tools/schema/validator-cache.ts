/**
 * The compiled validators of one registry's tools: shared by identical schemas,
 * reference-counted, and kept in a bounded LRU once released (so memory stays bounded).
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { JsonObject } from '../../util/lossless-json.js';
import { SchemaCompiler } from './compile.js';
import type { JsonSchemaDialect } from './dialects.js';
import type { ToolsRegExpEngine } from './plugin-options.js';

/**
 * How many compiled validators whose last tool went away are kept for reuse. Agents
 * typically register the same few schemas over and over; compiling one with ajv costs
 * hundreds of microseconds, keeping one costs about 4 KB, so a small bounded LRU pays.
 * 64 covers the tool set of a typical backend (a schema any live tool uses is never in
 * it: live validators are shared, not cached) while the LRU stays under 0.3 MB; it was
 * 256 (about 1 MB) before the heap measurements of many short-lived agents.
 */
export const RELEASED_VALIDATORS_MAX = 64;

/** @internal One interned schema: its JSON text, shared parameters and validator, and how many live tools use it. */
export interface Interned {
  readonly key: string;
  readonly params: JsonObject;
  /** Dropped when the LRU evicts the record (a template may still hold it, see `retain`). */
  fn: ValidateFunction | undefined;
  refs: number;
}

/** @internal The validators of one registry. */
export class ValidatorCache {
  readonly #compiler: SchemaCompiler;
  readonly #live = new Map<string, Interned>();
  /** Validators no live tool uses, least recently released first (at most {@link RELEASED_VALIDATORS_MAX}). */
  readonly #released = new Map<string, Interned>();
  readonly #byParams = new WeakMap<object, Interned>();
  /** The record {@link validate} used last: what `#byParams` holds under its parameters (cleared when the LRU evicts it). */
  #last: Interned | undefined = undefined;

  constructor(defaultDialect: JsonSchemaDialect, regExp?: ToolsRegExpEngine) {
    this.#compiler = new SchemaCompiler(defaultDialect, regExp);
  }

  /**
   * Interns a tool's parameters: identical schemas (by JSON text, so by dialect too: a
   * schema without `$schema` is always read in this registry's default dialect) share one
   * deep-frozen object and one compiled validator, reference-counted. A released one is
   * taken back out of the LRU. Returns its record, whose `params` is the shared
   * parameters object.
   *
   * @throws ToolSchemaError when the schema is refused.
   */
  acquire(tool: string, params: JsonObject): Interned {
    // Interned parameters (a snapshot that reused its template whole) know their key.
    const key = this.#byParams.get(params)?.key ?? JSON.stringify(params);
    let v = this.#live.get(key);
    if (v === undefined && (v = this.#released.get(key)) !== undefined) {
      this.#released.delete(key);
      this.#live.set(key, v);
    }
    if (v === undefined) {
      v = { key, params, fn: this.#compiler.compile(tool, params).fn, refs: 0 };
      this.#live.set(key, v);
      this.#byParams.set(params, v);
    }
    v.refs++;
    return v;
  }

  /**
   * Takes one more reference to `v` when a live tool still uses it, and says whether it
   * did. A live record is the one `#live` holds under its key and `#byParams` under its
   * parameters, so this is exactly `acquire(tool, v.params)` then, without its two lookups
   * (the usual repeat registration: every agent registering the same tools). A released
   * or evicted one is left alone (`false`): `acquire` takes it back or interns anew.
   */
  retain(v: Interned): boolean {
    if (v.refs === 0) return false;
    v.refs++;
    return true;
  }

  /**
   * Drops one reference to interned parameters. The last one moves the validator to the
   * released LRU, evicting the least recently released beyond {@link RELEASED_VALIDATORS_MAX}.
   */
  release(params: JsonObject): void {
    const v = this.#byParams.get(params);
    if (v === undefined || v.refs === 0) return;
    if (--v.refs === 0) {
      // A released validator stays findable by its parameters (they may come back as a
      // snapshot's template) until the LRU evicts it.
      this.#live.delete(v.key);
      this.#released.set(v.key, v);
      if (this.#released.size > RELEASED_VALIDATORS_MAX) {
        const oldest = this.#released.values().next();
        if (oldest.done !== true) {
          this.#released.delete(oldest.value.key);
          this.#byParams.delete(oldest.value.params);
          if (this.#last === oldest.value) this.#last = undefined;
          oldest.value.fn = undefined;
        }
      }
    }
  }

  /**
   * Validates arguments with the one compiled validator of `params`: `undefined` when
   * valid, else what is wrong. Fails closed: parameters without a validator are refused.
   * A validator never answers with a promise ("$async" is refused at register); if one
   * did, the promise is contained and the arguments are refused.
   */
  validate(params: JsonObject, args: unknown): string | undefined {
    // the same tool's calls in a row (and tools sharing one schema) skip the WeakMap
    let v = this.#last;
    if (v === undefined || v.params !== params) {
      v = this.#byParams.get(params);
      if (v !== undefined) this.#last = v;
    }
    if (v === undefined || v.refs === 0 || v.fn === undefined) return 'the tool has no compiled validator (it was unregistered)';
    const ok: unknown = v.fn(args);
    if (ok === true) return undefined;
    if (ok !== false) {
      try {
        if (ok !== null && typeof ok === 'object') (ok as Promise<unknown>).then(undefined, () => undefined);
      } catch {
        // not a promise after all: nothing escapes either way
      }
      return 'the validator did not answer synchronously';
    }
    return errorsText(v.fn.errors);
  }

  /** Number of validators used by live tools. */
  get liveCount(): number {
    return this.#live.size;
  }

  /** Number of released validators kept for reuse. */
  get releasedCount(): number {
    return this.#released.size;
  }
}

/** ajv's `errorsText` with `dataVar: 'arguments'`, without needing an ajv instance. */
function errorsText(errors: readonly ErrorObject[] | null | undefined): string {
  if (errors === null || errors === undefined || errors.length === 0) return 'no errors';
  return errors.map((e) => `arguments${e.instancePath} ${e.message ?? e.keyword}`).join(', ');
}
