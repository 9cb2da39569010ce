/**
 * The payload check of the test beds: every event a bed's sink receives is checked against the
 * event catalog (svc's kinds, `core/events/kinds.ts`, and the plugins' declared kinds). An event
 * of an undeclared kind, or with an undeclared, missing or mistyped field, is a drift between
 * the code and the catalog: it is printed and thrown as an uncaught error, which fails the test
 * module that emitted it even when the emitter swallows errors (as fire-and-forget emitters do).
 *
 * A third-party-style test plugin that declares its kinds without a payload is accepted with
 * any data; the built-in plugins must declare theirs (`test/core/events/payloads_test.ts`).
 */
import { eventPayloadProblem } from "../../core/events/payload.ts";
import type { EventSink, SvcEvent } from "../../core/events/sink.ts";
import { builtinPlugins } from "../../plugins/builtin.ts";
import { pluginEventCatalog } from "../../plugins/host.ts";
import type { SvcPlugin } from "../../plugins/plugin.ts";

/** Every drift seen by this module's beds (also thrown as an uncaught error). */
export const eventDrifts: string[] = [];

/** The check for events svc, its built-in plugins and `plugins` emit. */
export function eventCheck(plugins: readonly SvcPlugin[] = []): (event: SvcEvent) => string | null {
  const builtin = builtinPlugins();
  const names = new Set(builtin.map((plugin) => plugin.name));
  const all = [...builtin, ...plugins.filter((plugin) => !names.has(plugin.name))];
  return eventPayloadProblem(pluginEventCatalog(all), { acceptUndeclaredPayloads: true });
}

/** Reports a drift: recorded, printed, and thrown from a microtask (fails the test module). */
export function reportEventDrift(problem: string): void {
  eventDrifts.push(problem);
  console.error(`event catalog drift: ${problem}`);
  // Read only (never set by a test): lets a survey run see every drift without stopping a module.
  if (Deno.env.get("TEST_EVENT_DRIFT") === "report") return;
  queueMicrotask(() => {
    throw new Error(
      `event catalog drift: ${problem} (declare it in core/events/kinds.ts or the plugin's events)`,
    );
  });
}

/** A sink that checks each event, then hands it to `next`. */
export function checkedSink(next: (event: SvcEvent) => void, plugins: readonly SvcPlugin[] = []): EventSink {
  const check = eventCheck(plugins);
  return {
    emit(event) {
      const problem = check(event);
      if (problem !== null) reportEventDrift(problem);
      next(event);
    },
  };
}
