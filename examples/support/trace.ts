/**
 * The `--trace` flag of the examples: OpenTelemetry in memory (no collector, no network),
 * polestar's spans through `polestar-di/otel`, and the finished spans printed as a tree.
 *
 * ```ts
 * const tracing = process.argv.includes('--trace') ? startTracing() : undefined;
 * // ... run the example ...
 * if (tracing) console.log(tracing.tree()); // then tracing.stop()
 * ```
 *
 * An example that drives a model SDK with its own telemetry passes `tracing.tracer('ai')`
 * to it (the AI SDK's `experimental_telemetry: { isEnabled: true, tracer }`), so the SDK's
 * spans and polestar's land in one tree.
 */
import { context, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { instrumentPolestar } from 'polestar-di/otel';

/** An in-memory trace of what an example did. */
export interface Tracing {
  /** A tracer of the same provider, for spans of the example's own (a request) or a model SDK's. */
  tracer(name: string): Tracer;
  /** The spans finished so far. */
  spans(): readonly ReadableSpan[];
  /** The finished spans as an indented tree (see {@link formatSpanTree}). */
  tree(options?: SpanTreeOptions): string;
  /** Stops tracing: unsubscribes polestar, unregisters the context manager, shuts the provider down. */
  stop(): Promise<void>;
}

/** What {@link formatSpanTree} prints besides each span's name. */
export interface SpanTreeOptions {
  /** Print each span's duration (default `true`; turn it off for output that compares equal run to run). */
  durations?: boolean;
  /** Attributes to print after the name when present (default: `gen_ai.conversation.id`). */
  attributes?: readonly string[];
}

/**
 * Starts tracing into memory: registers the AsyncLocalStorage context manager (so spans
 * nest across `await`), a tracer provider with an in-memory exporter, and polestar's
 * instrumentation on it.
 */
export function startTracing(): Tracing {
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const unsubscribe = instrumentPolestar({ tracerProvider: provider });
  return {
    tracer: (name) => provider.getTracer(name),
    spans: () => exporter.getFinishedSpans(),
    tree: (options) => formatSpanTree(exporter.getFinishedSpans(), options),
    stop: async () => {
      unsubscribe();
      context.disable();
      await provider.shutdown();
    },
  };
}

const nanos = (t: readonly [number, number]): number => t[0] * 1e9 + t[1];

/**
 * Formats spans as a tree, children under their parent in start order:
 *
 * ```text
 * invoke_agent triage (2.1 ms)
 * └─ execute_tool delegate (1.4 ms)
 *    └─ invoke_agent billing (1.2 ms)
 *       └─ execute_tool refund ERROR DENIED (0.3 ms)
 * ```
 *
 * A span whose parent is not among `spans` (still open, or another process's) is a root.
 * A failed span shows `ERROR` and its `error.type`.
 */
export function formatSpanTree(spans: readonly ReadableSpan[], options: SpanTreeOptions = {}): string {
  const durations = options.durations ?? true;
  const shown = options.attributes ?? ['gen_ai.conversation.id'];
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  const children = new Map<string | undefined, ReadableSpan[]>();
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    const key = parent !== undefined && ids.has(parent) ? parent : undefined;
    const list = children.get(key) ?? [];
    list.push(span);
    children.set(key, list);
  }
  for (const list of children.values()) list.sort((a, b) => nanos(a.startTime) - nanos(b.startTime));

  const label = (span: ReadableSpan): string => {
    const parts = [span.name];
    for (const key of shown) {
      const value = span.attributes[key];
      if (value !== undefined) parts.push(`[${key}=${String(value)}]`);
    }
    if (span.status.code === SpanStatusCode.ERROR) parts.push(`ERROR ${String(span.attributes['error.type'] ?? '')}`.trimEnd());
    if (durations) parts.push(`(${(nanos(span.duration) / 1e6).toFixed(1)} ms)`);
    return parts.join(' ');
  };
  const lines: string[] = [];
  const walk = (span: ReadableSpan, prefix: string, last: boolean, root: boolean): void => {
    lines.push(root ? label(span) : `${prefix}${last ? '└─ ' : '├─ '}${label(span)}`);
    const below = children.get(span.spanContext().spanId) ?? [];
    const next = root ? '' : `${prefix}${last ? '   ' : '│  '}`;
    below.forEach((child, i) => walk(child, next, i === below.length - 1, false));
  };
  for (const root of children.get(undefined) ?? []) walk(root, '', true, true);
  return lines.join('\n');
}
