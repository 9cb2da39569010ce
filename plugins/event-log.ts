/**
 * The event-log plugin: writes every svc event (or the kinds it is told) as one JSON line,
 * for hosts that ship events to a log pipeline. Event data never holds secrets.
 *
 * @module
 */
import type { SvcEvent } from "../core/events/sink.ts";
import { definePlugin, type SvcPlugin } from "./plugin.ts";

/** Options of {@link eventLogPlugin}. */
export interface EventLogOptions {
  /** Where each line goes (for example `console.log`). */
  write: (line: string) => void;
  /** Event-kind patterns to keep (`login.*`, `token.refresh_reuse_detected`); default every kind. */
  kinds?: readonly string[];
}

/**
 * A plugin that logs events as JSON lines: `{"kind", "occurredAt" (ISO), "realmId", "orgId", "userId", "data"}`.
 *
 * @example Installed in a host file (`deno run -A host.ts`)
 * ```ts
 * import { eventLogPlugin } from "@svc/svc";
 * import { denoRuntime as runtime, runCli } from "@svc/svc/server";
 *
 * const plugins = [eventLogPlugin({ write: console.log, kinds: ["login.*"] })];
 * if (import.meta.main) Deno.exit(await runCli(["start"], runtime, { plugins }));
 * ```
 */
export function eventLogPlugin(options: EventLogOptions): SvcPlugin {
  const patterns = options.kinds?.map(compileKindPattern) ?? null;
  return definePlugin({
    name: "event-log",
    onEvent(event: SvcEvent) {
      if (patterns !== null && !patterns.some((pattern) => pattern.test(event.kind))) return;
      options.write(JSON.stringify({
        kind: event.kind,
        occurredAt: new Date(event.occurredAt).toISOString(),
        realmId: event.realmId ?? null,
        orgId: event.orgId ?? null,
        userId: event.userId ?? null,
        data: event.data,
      }));
    },
  });
}

/** `login.*` matches `login.succeeded`; `*` matches everything; other text matches itself. */
function compileKindPattern(pattern: string): RegExp {
  const escaped = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  return new RegExp(`^${escaped}$`);
}
