/**
 * An example third-party plugin, written only against `mod.ts`: a config section
 * (`SVC_GREETING_MESSAGE`), its own table (`greeting_visits`), a readiness check, start and
 * stop hooks, a claim contributor, an event kind of its own (`greeting.said`) and a route.
 *
 * `GET /greeting/hello?name=Ada` answers `{ message, visits }` (visits counted per name in the
 * plugin's table) and emits `greeting.said`.
 *
 * @module
 */
import * as v from "valibot";
import { definePlugin, eventField, type PluginContext, type SvcPlugin, ValidationError } from "../mod.ts";

/** The plugin's config section. */
export interface GreetingConfig {
  /** The greeting (`SVC_GREETING_MESSAGE`, default "Hello"). */
  readonly message: string;
}

const ConfigSchema = v.object({
  message: v.optional(
    v.pipe(v.string(), v.minLength(1), v.maxLength(100, "a greeting of at most 100 characters")),
    "Hello",
  ),
});

/** Builds the greeting plugin; `log` receives its start and stop lines. */
export function greetingPlugin(log: (line: string) => void = () => {}): SvcPlugin<GreetingConfig> {
  let context: PluginContext<GreetingConfig> | null = null;
  return definePlugin<GreetingConfig>({
    name: "greeting",
    config: {
      schema: ConfigSchema,
      settings: [{ env: "SVC_GREETING_MESSAGE", key: "message", doc: "the greeting", defaultText: "Hello" }],
    },
    tables: [
      "CREATE TABLE IF NOT EXISTS greeting_visits (name text PRIMARY KEY, visits integer NOT NULL)",
    ],
    events: [{
      kind: "greeting.said",
      description: "the greeting route answered",
      payload: { name: eventField.string("the name greeted") },
    }],
    start(ctx) {
      context = ctx;
      log(`greeting: started with ${JSON.stringify(ctx.config.message)}`);
    },
    stop() {
      log("greeting: stopped");
    },
    async readiness(ctx) {
      await ctx.sql.query("SELECT 1 FROM greeting_visits LIMIT 1");
    },
    claims(request) {
      return request.token === "id" ? { greeting: context?.config.message ?? "Hello" } : {};
    },
    mount(ctx) {
      return [(app) => {
        app.get("/greeting/hello", async (c) => {
          const name = c.req.query("name") ?? "world";
          if (!/^[A-Za-z]{1,40}$/.test(name)) throw new ValidationError("name must be 1 to 40 letters");
          const [row] = await ctx.sql.query<{ visits: number }>(
            `INSERT INTO greeting_visits (name, visits) VALUES ($1, 1)
             ON CONFLICT (name) DO UPDATE SET visits = greeting_visits.visits + 1 RETURNING visits`,
            [name],
          );
          ctx.events.emit({ kind: "greeting.said", occurredAt: ctx.clock.now(), data: { name } });
          return c.json({ message: `${ctx.config.message}, ${name}!`, visits: Number(row.visits) });
        });
      }];
    },
  });
}
