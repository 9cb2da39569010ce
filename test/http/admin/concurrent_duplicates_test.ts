/**
 * Concurrent duplicates of admin mutations (issue 24, finding 9), on Postgres: for every mutating
 * `/svc-admin` route of the admin route matrix (`cases.ts`, the built-in plugins' routes included)
 * whose identical repeat is meant to change nothing (deletes, revocations, disables, state changes,
 * memberships, creations under a unique name…):
 *
 * - sequentially, on one fresh target: the first call answers its success status, appends one audit
 *   chain entry and emits its events; the identical repeat appends no entry and emits nothing, and
 *   its answer is what a duplicate must get;
 * - concurrently, on another fresh target: of 20 identical calls exactly one changes state (one
 *   entry, the events of one call), every other answers what the sequential repeat answered;
 * - the chain verifies at the end.
 *
 * Routes whose identical repeat is a new change by design (each rotation, test delivery, drill or
 * token is new) are named in {@link NEW_EACH_TIME} with the reason, so a new route cannot go unraced
 * silently.
 */
import { strict as assert } from "node:assert";
import { builtinPlugins } from "../../../plugins/builtin.ts";
import { pluginBed } from "../../support/plugins.ts";
import { seeder } from "../../support/seed.ts";
import { ADMIN_CASES } from "./cases.ts";

const DUPLICATES = 20;

/** Mutating routes whose identical repeat is a change of its own. */
const NEW_EACH_TIME: ReadonlyMap<string, string> = new Map([
  ["POST /svc-admin/webhooks", "each call creates an endpoint (no unique name)"],
  ["POST /svc-admin/webhooks/:endpointId/rotate-secret", "each call rotates to a new secret"],
  ["POST /svc-admin/webhooks/:endpointId/test", "each call enqueues a test delivery"],
  ["POST /svc-admin/service-accounts/:serviceAccountId/rotate-secret", "each call rotates to a new secret"],
  ["POST /svc-admin/signing-keys/rotate", "each call makes a new primary key"],
  ["POST /svc-admin/api-keys", "each call issues a new key"],
  ["POST /svc-admin/oidc/clients", "each call registers a client with a new client id"],
  ["POST /svc-admin/oidc/initial-access-tokens", "each call mints a new initial access token"],
  ["POST /svc-admin/break-glass/drill", "each drill is recorded"],
  ["POST /svc-admin/break-glass/rotate", "each call rotates to a new credential"],
  ["POST /svc-admin/impersonation", "each call starts an impersonation"],
  ["POST /svc-admin/impersonation/:id/token", "each call issues a token"],
  ["POST /svc-admin/users/invite", "each call sends an invitation"],
  ["POST /svc-admin/policies", "each call creates a policy (no unique name)"],
  ["POST /svc-admin/federation/providers", "each call creates a provider (no unique name)"],
  ["POST /svc-admin/saml/connections", "each call creates a connection (no unique name)"],
  [
    "POST /svc-admin/saml/connections/:connectionId/encryption-keys",
    "each call makes a new SP key (rotation), up to the limit of 3",
  ],
  ["POST /svc-admin/imports/:kind", "each call is an import run"],
  ["POST /svc-admin/scim/connections", "each call creates a connection with its own token (no unique name)"],
  ["POST /svc-admin/scim/connections/:connectionId/rotate", "each call rotates to a new token"],
]);

Deno.test("postgres: 20 concurrent identical admin mutations change state once, audit once, emit once", async (t) => {
  const plugins = builtinPlugins();
  const plugged = await pluginBed(plugins, {}, { postgres: true });
  const admin = plugged.admin;
  try {
    const seed = seeder(admin.bed.database.db);
    const pluginAdmin = await seed.role(
      admin.realmId,
      "plugin-admin",
      plugins.flatMap((plugin) =>
        (plugin.permissions ?? []).map((permission) => ({ pattern: permission.id }))
      ),
    );
    await seed.assign(admin.realmId, pluginAdmin, { kind: "User", id: admin.users.global });
    await admin.bed.snapshots.invalidateAll();

    const events = () => admin.bed.events.length;
    const call = async (method: string, request: Awaited<ReturnType<typeof ADMIN_CASES[0]["prepare"]>>) => {
      const res = await plugged.request(method, request.path, {
        body: request.body,
        headers: request.headers,
      });
      return { status: res.status, text: await res.text() };
    };

    const raced = ADMIN_CASES.filter((row) => row.mutates && !NEW_EACH_TIME.has(row.route));
    await t.step("every route named as new each time is a mutating route", () => {
      const mutating = new Set(ADMIN_CASES.filter((row) => row.mutates).map((row) => row.route));
      assert.deepEqual([...NEW_EACH_TIME.keys()].filter((route) => !mutating.has(route)), []);
    });

    for (const row of raced) {
      const method = row.route.slice(0, row.route.indexOf(" "));
      await t.step(row.route, async () => {
        // Sequentially: the first call changes, the repeat does not.
        const first = await row.prepare(admin, "global");
        let chain = await admin.chainLength();
        let emitted = events();
        const once = await call(method, first);
        assert.equal(once.status, row.status, `first call: ${once.text}`);
        assert.equal(await admin.chainLength() - chain, 1, "first call: one audit entry");
        const eventsOfOne = events() - emitted;
        chain = await admin.chainLength();
        emitted = events();
        const repeat = await call(method, first);
        assert.equal(await admin.chainLength() - chain, 0, `the repeat (${repeat.status}) writes no entry`);
        assert.equal(events() - emitted, 0, "the repeat emits no event");
        // A no-op (2xx), gone (404), taken (409), a spent single-use token (401) or a stale If-Match (412).
        assert.ok(
          repeat.status < 300 || [401, 404, 409, 412].includes(repeat.status),
          `the repeat answers a no-op or a refusal: ${repeat.status} ${repeat.text}`,
        );

        // Concurrently: exactly one of the duplicates changes.
        const target = await row.prepare(admin, "global");
        chain = await admin.chainLength();
        emitted = events();
        const answers = await Promise.all(Array.from({ length: DUPLICATES }, () => call(method, target)));
        const statuses = answers.map((a) => a.status);
        const expected = [row.status, ...Array(DUPLICATES - 1).fill(repeat.status)].sort();
        assert.deepEqual(statuses.sort(), expected, answers.map((a) => `${a.status} ${a.text}`).join("\n"));
        assert.equal(await admin.chainLength() - chain, 1, "one audit entry for all the duplicates");
        assert.equal(events() - emitted, eventsOfOne, "the events of one call");
      });
    }

    await t.step("the chain verifies", async () => {
      const report = await admin.bed.storage.adminAudit.verify(admin.realmId);
      assert.equal(report.valid, true, JSON.stringify(report.firstBad));
    });
  } finally {
    await plugged.close();
  }
});
