/**
 * The event payload catalog: every kind svc and its built-in plugins emit is declared with its
 * fields (`core/events/kinds.ts`, the plugins' `events`), no declared field is a secret, the check
 * refuses what drifts from a declaration, and a scan of the sources finds no kind literal the
 * catalog lacks. (The test beds check every event they see: `test/support/events.ts`.)
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import {
  EVENT_CATALOG,
  EVENT_FAMILIES,
  EVENT_KINDS,
  eventFamilyOf,
  isEventKind,
} from "../../../core/events/catalog.ts";
import { CORE_EVENT_KINDS } from "../../../core/events/kinds.ts";
import {
  type EventField,
  eventField,
  type EventFieldType,
  type EventPayload,
  eventPayloadProblem,
  payloadProblem,
} from "../../../core/events/payload.ts";
import { builtinPlugins } from "../../../plugins/builtin.ts";
import { pluginEventCatalog } from "../../../plugins/host.ts";
import { pluginTablePrefix } from "../../../plugins/plugin.ts";

const root = new URL("../../../", import.meta.url);
const catalog = pluginEventCatalog(builtinPlugins());

Deno.test("every kind svc names is declared with a payload, in a family or named", () => {
  for (const kind of Object.values(EVENT_KINDS)) assert.ok(Object.hasOwn(CORE_EVENT_KINDS, kind), kind);
  for (const [kind, declared] of Object.entries(CORE_EVENT_KINDS)) {
    assert.ok(isEventKind(kind), kind);
    assert.ok(
      eventFamilyOf(kind) !== null || (Object.values(EVENT_KINDS) as string[]).includes(kind),
      `${kind}: outside the families, a kind needs a name in EVENT_KINDS`,
    );
    assert.ok(declared.when.length > 0, kind);
    assert.ok(EVENT_CATALOG.some((entry) => entry.kind === kind && entry.payload === declared.payload), kind);
  }
});

Deno.test("every kind of a built-in plugin declares its payload", () => {
  for (const plugin of builtinPlugins()) {
    for (const event of plugin.events ?? []) {
      assert.ok(event.payload !== undefined, `${plugin.name}: ${event.kind}`);
    }
  }
});

const SECRET_NAME = /(^|[a-z])(secret|password|token|code|otp|privatekey|key)s?$/i;
/** Field names that end like a secret but name something public. */
const NOT_SECRETS = new Set(["key", "roleKey", "statusCode"]);

Deno.test("no declared field is a secret (tokens, passwords, codes, keys), and every field has a meaning", () => {
  for (const entry of catalog) {
    for (const [name, field] of Object.entries(entry.payload ?? {})) {
      assert.ok(!SECRET_NAME.test(name) || NOT_SECRETS.has(name), `${entry.kind}.${name} reads as a secret`);
      assert.ok(field.doc.length > 0, `${entry.kind}.${name}`);
    }
  }
});

Deno.test("the check: an undeclared kind, a family pattern, an extra, missing, null or mistyped field are refused", () => {
  const check = eventPayloadProblem(catalog);
  const ok = {
    sessionId: "s",
    mfa: "Password",
    factors: ["password"],
    audience: null,
    newDevice: false,
    risk: null,
  };
  assert.equal(check({ kind: "login.succeeded", data: ok }), null);
  assert.equal(check({ kind: "login.succeeded", data: { ...ok, extra: undefined } }), null);
  assert.match(check({ kind: "login.nope", data: {} })!, /not in the catalog/);
  assert.match(check({ kind: "login.*", data: {} })!, /not in the catalog/);
  assert.match(
    check({ kind: "login.succeeded", data: { ...ok, password: "x" } })!,
    /field password is not declared/,
  );
  const { sessionId: _, ...missing } = ok;
  assert.match(check({ kind: "login.succeeded", data: missing })!, /field sessionId is missing/);
  assert.match(
    check({ kind: "login.succeeded", data: { ...ok, sessionId: null } })!,
    /not declared nullable/,
  );
  assert.match(check({ kind: "login.succeeded", data: { ...ok, newDevice: "no" } })!, /declared boolean/);
  assert.match(check({ kind: "login.succeeded", data: { ...ok, factors: [1] } })!, /declared string\[\]/);
  assert.match(check({ kind: "mfa.recovery_codes_generated", data: { count: 1.5 } })!, /declared integer/);
  assert.match(check({ kind: "login.succeeded", data: [] })!, /not an object/);
  const bare = eventPayloadProblem([{ kind: "x.y" }]);
  assert.match(bare({ kind: "x.y", data: {} })!, /declares no payload/);
  assert.equal(
    eventPayloadProblem([{ kind: "x.y" }], { acceptUndeclaredPayloads: true })({ kind: "x.y", data: {} }),
    null,
  );
});

const SAMPLES: Record<EventFieldType, fc.Arbitrary<unknown>> = {
  string: fc.string(),
  integer: fc.integer(),
  number: fc.double({ noNaN: true, noDefaultInfinity: true }),
  boolean: fc.boolean(),
  object: fc.dictionary(fc.string(), fc.string()),
  "string[]": fc.array(fc.string()),
  "object[]": fc.array(fc.dictionary(fc.string(), fc.integer())),
};

/** Data that fits a payload: each required field, and optional ones or not; null where allowed. */
function fitting(payload: EventPayload): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(payload).map(([name, field]: [string, EventField]) => {
    const value = field.nullable ? fc.oneof(SAMPLES[field.type], fc.constant(null)) : SAMPLES[field.type];
    return fc.tuple(fc.constant(name), field.optional ? fc.option(value, { nil: undefined }) : value);
  });
  return fc.tuple(...entries).map((pairs) =>
    Object.fromEntries(pairs.filter(([, value]) => value !== undefined))
  );
}

Deno.test("property: data built from a kind's declaration fits it; an extra field or a wrong type never does", () => {
  const declared = catalog.filter((entry) =>
    entry.payload !== undefined && Object.keys(entry.payload).length > 0
  );
  fc.assert(
    fc.property(
      fc.constantFrom(...declared).chain((entry) => fc.tuple(fc.constant(entry), fitting(entry.payload!))),
      ([entry, data]) => {
        assert.equal(payloadProblem(entry.payload!, data), null, entry.kind);
        assert.notEqual(payloadProblem(entry.payload!, { ...data, undeclaredField: 1 }), null);
        const [name, field] = Object.entries(entry.payload!)[0];
        const wrong = field.type === "string" ? 1 : "text";
        assert.notEqual(payloadProblem(entry.payload!, { ...data, [name]: wrong }), null);
      },
    ),
    { numRuns: 300 },
  );
  assert.equal(eventField.integer("n", { optional: true }).optional, true);
});

/**
 * Strings that look like kinds but are not: the audit actions (`role.create`, on `action:` lines,
 * skipped) and these configuration section paths.
 */
const NOT_KINDS = new Set(["authz.permissions", "authz.roles"]);
/** The kinds emitted from template literals (`${kind}.member_added`…), which the scan cannot read. */
const TEMPLATE_KINDS = [
  "group.member_added",
  "group.member_removed",
  "team.member_added",
  "team.member_removed",
  "role.assigned",
  "role.unassigned",
  "user.role_assigned",
  "user.role_unassigned",
  "service_account.disabled",
  "service_account.enabled",
];

async function sourceFiles(dir: string, into: string[] = []): Promise<string[]> {
  for await (const entry of Deno.readDir(new URL(`${dir}/`, root))) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) await sourceFiles(path, into);
    else if (path.endsWith(".ts")) into.push(path);
  }
  return into;
}

Deno.test("scan: every kind literal in core/, http/ and plugins/ is in the catalog", async () => {
  const kinds = new Set(catalog.map((entry) => entry.kind));
  const pluginFamilies = builtinPlugins().map((plugin) => pluginTablePrefix(plugin.name).slice(0, -1));
  const families = [...EVENT_FAMILIES, "token", "authz", ...pluginFamilies].join("|");
  const literal = new RegExp(`["'\`]((?:${families})\\.[a-z0-9_]+)["'\`]`, "g");
  const missing: string[] = [];
  let seen = 0;
  for (const dir of ["core", "http", "plugins"]) {
    for (const file of await sourceFiles(dir)) {
      const lines = (await Deno.readTextFile(new URL(file, root))).split("\n");
      lines.forEach((line, index) => {
        if (/^\s*(\*|\/\/|\/\*)/.test(line) || /\baction\b/.test(line)) return;
        for (const match of line.matchAll(literal)) {
          seen++;
          if (!kinds.has(match[1]) && !NOT_KINDS.has(match[1])) {
            missing.push(`${file}:${index + 1}: ${match[1]}`);
          }
        }
      });
    }
  }
  assert.deepEqual(missing, [], "declare these kinds in core/events/kinds.ts or the plugin's events");
  assert.ok(seen > 100, `the scan found only ${seen} kind literals`);
  for (const kind of TEMPLATE_KINDS) assert.ok(kinds.has(kind), kind);
});
