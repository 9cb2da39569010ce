/**
 * Scale-out: three `svc start` instances on one Postgres database, as a load balancer would spread
 * requests over them. A role change made on one is seen by the others without a request to the
 * first (LISTEN/NOTIFY evicts their cached snapshots); a logout on one stops the token on the
 * others; a webhook is delivered once although three dispatchers poll the queue; and the audit
 * chain stays gap-free while admin writes land on all three at once.
 */
import { strict as assert } from "node:assert";
import {
  FAST_SERVER_PASSWORD_ENV,
  freshServerDatabase,
  httpClient,
  type RealServer,
  startServer,
} from "../support/server.ts";
import { startReceiver } from "../support/webhook-receiver.ts";

const ADMIN_EMAIL = "root@example.test";
const ADMIN_PASSWORD = "bootstrap secret";

/** Polls `probe` every 25 ms until it returns true; resolves to the time taken, or throws after `limitMs`. */
async function eventually(what: string, probe: () => Promise<boolean>, limitMs = 10_000): Promise<number> {
  const started = performance.now();
  while (!(await probe())) {
    if (performance.now() - started > limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return performance.now() - started;
}

Deno.test("scale-out: three instances on one Postgres behave as one", async (t) => {
  const database = await freshServerDatabase("svc_scale");
  const receiver = startReceiver({ secrets: () => [], nowSeconds: () => Date.now() / 1000 });
  const env = {
    SVC_PORT: "0",
    // Behind one load balancer, every instance has the same issuer (base URL).
    SVC_BASE_URL: "http://localhost:18080",
    SVC_DATABASE_URL: database.url,
    SVC_BOOTSTRAP_ADMIN_EMAIL: ADMIN_EMAIL,
    SVC_BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD,
    SVC_MAINTENANCE_INTERVAL_SECONDS: "0",
    SVC_WEBHOOK_ALLOW_PRIVATE_RECEIVERS: "127.0.0.0/8",
    // A plugin with tables of its own: three first boots create them at once (issue 25).
    SVC_PLUGINS: "federation",
    ...FAST_SERVER_PASSWORD_ENV,
  };
  const servers: RealServer[] = [];
  let stopped: PromiseSettledResult<Deno.CommandStatus>[] = [];
  try {
    // Started at once on an empty database: schema, plugin tables, signing keys and the bootstrap
    // are safe from several instances (the in-process race of 20 such boots is
    // test/cli/prepare_storage_race_test.ts).
    servers.push(...await Promise.all([0, 1, 2].map(() => startServer("deno", env))));
    const [a, b, c] = servers.map((s) => httpClient(s.url));
    const root = await a.signIn(ADMIN_EMAIL, ADMIN_PASSWORD);

    await t.step("a role change on one instance is seen by the others", async () => {
      const user = await a.call("POST", "/svc-admin/users", root, {
        email: "rio@example.test",
        password: "rio's long password",
        emailVerified: true,
      });
      assert.equal(user.status, 201, JSON.stringify(user.json));
      const token = await b.signIn("rio@example.test", "rio's long password");
      const permissionsOn = async (client: typeof c) =>
        (await client.call("GET", "/profile/permissions", token)).json.permissions as string[];
      // Both other instances cache the user's (empty) snapshot.
      assert.deepEqual(await permissionsOn(b), []);
      assert.deepEqual(await permissionsOn(c), []);
      const role = await a.call("POST", "/svc-admin/roles", root, {
        key: "auditor",
        displayName: "Auditor",
        grants: [{ pattern: "svc:global:audit-read", effect: "Allow" }],
      });
      assert.equal(role.status, 201, JSON.stringify(role.json));
      const assigned = await a.call("POST", "/svc-admin/role-assignments", root, {
        roleId: role.json.id,
        principalKind: "User",
        principalId: user.json.id,
      });
      assert.equal(assigned.status, 201, JSON.stringify(assigned.json));
      for (const other of [b, c]) {
        await eventually(
          "the grant on another instance",
          async () => (await permissionsOn(other)).includes("svc:global:audit-read"),
        );
      }
    });

    await t.step("a logout on one instance stops the token on the others", async () => {
      const token = await c.signIn("rio@example.test", "rio's long password");
      for (const client of [a, b, c]) {
        assert.equal((await client.call("GET", "/profile/me", token)).status, 200);
      }
      assert.equal((await a.call("POST", "/auth/logout", token)).status, 204);
      for (const client of [b, c]) {
        await eventually(
          "the ended session on another instance",
          async () => (await client.call("GET", "/profile/me", token)).status === 401,
        );
      }
    });

    await t.step("a webhook is delivered once although three dispatchers poll the queue", async () => {
      const endpoint = await a.call("POST", "/svc-admin/webhooks", root, {
        url: receiver.url,
        eventPatterns: ["user.*"],
      });
      assert.equal(endpoint.status, 201, JSON.stringify(endpoint.json));
      const user = await b.call("POST", "/svc-admin/users", root, { email: "sol@example.test" });
      assert.equal(user.status, 201, JSON.stringify(user.json));
      const forSol = () => receiver.received.filter((r) => r.body.includes(user.json.id));
      await eventually("the delivery", () => Promise.resolve(forSol().length > 0));
      // Every instance's dispatcher wakes or polls meanwhile: a second delivery would show up.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const deliveries = forSol();
      assert.equal(new Set(deliveries.map((d) => d.deliveryId)).size, deliveries.length);
      assert.equal(deliveries.filter((d) => d.eventKind === "user.created").length, 1);
    });

    await t.step("the audit chain stays gap-free under admin writes on all three at once", async () => {
      const before = (await c.call("GET", "/svc-admin/audit/verify", root)).json;
      assert.equal(before.valid, true);
      const clients = [a, b, c];
      const writes = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          clients[i % 3].call("POST", "/svc-admin/roles", root, {
            key: `concurrent-${i}`,
            displayName: `Concurrent ${i}`,
            grants: [],
          })),
      );
      assert.deepEqual(writes.map((w) => w.status), Array(30).fill(201));
      const after = (await b.call("GET", "/svc-admin/audit/verify", root)).json;
      assert.equal(after.valid, true, JSON.stringify(after));
      assert.equal(after.headSeq, before.headSeq + 30, "one entry per write, no gap, no fork");
      assert.equal(after.checked, after.headSeq);
    });
  } finally {
    stopped = await Promise.allSettled(servers.map((s) => s.stop()));
    await receiver.close();
    await database.drop();
  }
  for (const status of stopped) if (status.status === "rejected") throw status.reason;
});
