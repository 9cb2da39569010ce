/**
 * svc's OpenTelemetry spans, through `@opentelemetry/api` only: the tracer (instrumentation scope
 * `svc`, from the host's global provider) and {@link inSpan}, which runs a piece of work in an
 * active span. Without an SDK installed by the host the API is a no-op and a span costs next to
 * nothing. Spans carry names, kinds and attributes chosen by svc, never a secret, a token, a
 * password or an error's message (only its class or code).
 *
 * @module
 */
import { type Attributes, type Span, SpanKind, SpanStatusCode, trace, type Tracer } from "@opentelemetry/api";
import { SVC_VERSION } from "./version.ts";

/**
 * svc's tracer. The API's proxy tracer delegates to whatever provider the host registers, even
 * after this was created, so one instance serves the whole process.
 */
const TRACER: Tracer = trace.getTracer("svc", SVC_VERSION);

/** The tracer svc's spans come from: the host's global provider, instrumentation scope `svc`. */
export function svcTracer(): Tracer {
  return TRACER;
}

/** What a span of {@link inSpan} starts with. */
export interface SvcSpanOptions {
  /** Default `INTERNAL`; `CLIENT` for a call to another system (the database, a webhook receiver). */
  readonly kind?: SpanKind;
  /** Attributes known before the work starts. */
  readonly attributes?: Attributes;
}

/**
 * Runs `work` in a new active span named `name` (a child of the active span, when the host's
 * context manager carries one) and ends the span when the work settles. A thrown error sets the
 * span's status to `ERROR` and its `error.type` attribute to the error's `code` or class name,
 * then is rethrown unchanged.
 *
 * @example
 * ```ts
 * import { inSpan } from "@svc/svc";
 *
 * const sum = await inSpan("svc.example", { attributes: { "svc.items": 2 } }, (span) => {
 *   span.setAttribute("svc.outcome", "ok");
 *   return Promise.resolve(1 + 1);
 * });
 * console.log(sum); // 2
 * ```
 */
export function inSpan<T>(
  name: string,
  options: SvcSpanOptions,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  return TRACER.startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes },
    async (span) => {
      try {
        return await work(span);
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute("error.type", errorType(error));
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

function errorType(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && /^[\w.-]{1,64}$/.test(code)) return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === "string" && name !== "") return name;
  }
  return "_OTHER";
}
