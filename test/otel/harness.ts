/**
 * Shared pieces of the OpenTelemetry tests: a real tracer provider with an in-memory
 * exporter, the AsyncLocalStorage context manager registered globally, and helpers that
 * read the finished spans as a tree.
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

export interface Tracing {
  readonly exporter: InMemorySpanExporter;
  readonly provider: BasicTracerProvider;
  /** Unregisters the context manager and shuts the provider down. */
  close(): Promise<void>;
}

/** A tracer provider exporting to memory, with the AsyncLocalStorage context manager made global. */
export function startTracing(): Tracing {
  const manager = new AsyncLocalStorageContextManager().enable();
  if (!context.setGlobalContextManager(manager)) throw new Error('a global context manager was already registered');
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return {
    exporter,
    provider,
    close: async () => {
      context.disable();
      manager.disable();
      await provider.shutdown();
    },
  };
}

/** The id of a span's parent, or undefined for a root. */
export const parentId = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

/** The one finished span named `name` (fails when there are none or several). */
export function one(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  if (found.length !== 1) throw new Error(`expected one span "${name}", found ${found.length} among: ${spans.map((s) => s.name).join(', ')}`);
  return found[0] as ReadableSpan;
}

/** The `i`-th element of `list` (fails when there is none). */
export function nth<T>(list: readonly T[], i: number): T {
  if (i >= list.length) throw new Error(`expected at least ${i + 1} elements, found ${list.length}`);
  return list[i] as T;
}

/** The finished spans whose parent is `parent`, by name (sorted). */
export function childNames(spans: readonly ReadableSpan[], parent: ReadableSpan): string[] {
  return spans.filter((s) => parentId(s) === parent.spanContext().spanId).map((s) => s.name).sort();
}

/** The parent span of `span` among `spans`. */
export function parentOf(spans: readonly ReadableSpan[], span: ReadableSpan): ReadableSpan | undefined {
  const id = parentId(span);
  return id === undefined ? undefined : spans.find((s) => s.spanContext().spanId === id);
}

/** The chain of names from the root down to `span`. */
export function pathOf(spans: readonly ReadableSpan[], span: ReadableSpan): string[] {
  const path: string[] = [];
  for (let s: ReadableSpan | undefined = span; s !== undefined; s = parentOf(spans, s)) path.unshift(s.name);
  return path;
}
