/**
 * Records svc's OpenTelemetry spans in tests, through the API's global hooks the way a host's SDK
 * would install itself: a tracer provider whose spans are kept in memory, and a context manager on
 * `AsyncLocalStorage` (what the Node SDK uses), so a span started inside another's work has it as
 * its parent. Installed once per test process (the API's proxy tracer keeps the provider it first
 * finds); outside {@link recordSpans} … {@link stopRecording} spans are not recorded.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Attributes,
  type AttributeValue,
  type Context,
  context,
  type ContextManager,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  type SpanKind,
  type SpanOptions,
  type SpanStatus,
  trace,
  type Tracer,
} from "@opentelemetry/api";

/** A span as the test sees it. */
export interface RecordedSpan {
  name: string;
  kind: SpanKind | undefined;
  attributes: Record<string, AttributeValue | undefined>;
  status: SpanStatus | undefined;
  ended: boolean;
  parent: RecordedSpan | undefined;
}

let current: RecordedSpan[] | null = null;
let installed = false;
let nextId = 1;
const records = new WeakMap<Span, RecordedSpan>();

class AsyncLocalStorageContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    return this;
  }
}

function recordingSpan(record: RecordedSpan | null): Span {
  const id = (nextId++).toString(16).padStart(16, "0");
  const spanContext: SpanContext = { traceId: "0".repeat(16) + id, spanId: id, traceFlags: 1 };
  const span: Span = {
    spanContext: () => spanContext,
    setAttribute(key: string, value: AttributeValue) {
      if (record) record.attributes[key] = value;
      return span;
    },
    setAttributes(attributes: Attributes) {
      if (record) Object.assign(record.attributes, attributes);
      return span;
    },
    addEvent: () => span,
    addLink: () => span,
    addLinks: () => span,
    setStatus(status: SpanStatus) {
      if (record) record.status = status;
      return span;
    },
    updateName(name: string) {
      if (record) record.name = name;
      return span;
    },
    end() {
      if (record) record.ended = true;
    },
    isRecording: () => record !== null,
    recordException: () => {},
  };
  if (record) records.set(span, record);
  return span;
}

const recordingTracer: Tracer = {
  startSpan(name: string, options: SpanOptions = {}, ctx: Context = context.active()): Span {
    if (current === null) return recordingSpan(null);
    const parentSpan = trace.getSpan(ctx);
    const record: RecordedSpan = {
      name,
      kind: options.kind,
      attributes: { ...options.attributes },
      status: undefined,
      ended: false,
      parent: parentSpan ? records.get(parentSpan) : undefined,
    };
    current.push(record);
    return recordingSpan(record);
  },
  startActiveSpan(name: string, ...rest: unknown[]): unknown {
    const fn = rest.pop() as (span: Span) => unknown;
    const [options, ctx] = rest as [SpanOptions | undefined, Context | undefined];
    const parent = ctx ?? context.active();
    const span = recordingTracer.startSpan(name, options, parent);
    return context.with(trace.setSpan(parent, span), fn, undefined, span);
  },
} as Tracer;

/** Starts recording svc's spans (installing the provider and context manager once); returns the list. */
export function recordSpans(): RecordedSpan[] {
  if (!installed) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager());
    trace.setGlobalTracerProvider({ getTracer: () => recordingTracer });
    installed = true;
  }
  current = [];
  return current;
}

/** Stops recording; spans started afterwards are not kept. */
export function stopRecording(): void {
  current = null;
}
