/**
 * The directory admin API against the real server (`svc start` on a fresh Postgres database),
 * over HTTP as the bootstrap administrator: create an organization, add a domain and verify it
 * with the audited override, add members and page through them, and check the fences an
 * anonymous caller meets. The chain verifies at the end. (The member accounts are seeded in the
 * server's database: creating users is another admin route's job.)
 */
import { strict as assert } from "node:assert";
import { openDatabase } from "../../storage/open.ts";
import { seeder } from "../support/seed.ts";
import { httpClient, startTestServer } from "../support/server.ts";

Deno.test("e2e: directory admin API on the real server", async (t) => {
  const server = await startTestServer();
  const { call, signIn } = httpClient(server.url);
  try {
    const root = await signIn(server.adminEmail, server.adminPassword);
    let orgId = "";

    await t.step("create an organization; anonymous callers get 401", async () => {
      assert.equal(
        (await call("POST", "/svc-admin/organizations", undefined, { name: "x", displayName: "X" })).status,
        401,
      );
      const created = await call("POST", "/svc-admin/organizations", root, {
        name: "acme",
        displayName: "Acme",
      });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      assert.equal(created.headers.get("ETag"), '"1"');
      orgId = created.json.id;
      const listed = await call("GET", "/svc-admin/organizations?search=acm", root);
      assert.deepEqual(listed.json.items.map((o: { id: string }) => o.id), [orgId]);
    });

    await t.step("add a domain and verify it with the audited override", async () => {
      const domain = await call("POST", `/svc-admin/organizations/${orgId}/domains`, root, {
        value: "acme.example",
      });
      assert.equal(domain.status, 201, JSON.stringify(domain.json));
      assert.equal(domain.json.verificationRecord.name, "_svc-verification.acme.example");
      const verify = `/svc-admin/organizations/${orgId}/domains/${domain.json.id}/verify`;
      // No such TXT record exists on the resolver of this machine: the DNS proof fails.
      const proof = await call("POST", verify, root, {});
      assert.equal(proof.status, 409, JSON.stringify(proof.json));
      assert.equal(proof.json.error.code, "domain_verification_failed", "the runtime's resolver was asked");
      const verified = await call("POST", verify, root, {
        override: true,
        reason: "e2e: verified out of band",
      });
      assert.equal(verified.status, 200, JSON.stringify(verified.json));
      assert.equal(verified.json.verified, true);
      const entries = await call("GET", "/svc-admin/audit/entries?afterSeq=0&limit=1000", root);
      const last = entries.json.entries.at(-1);
      assert.equal(last.action, "organization.domain.verify");
      assert.equal(last.after.reason, "e2e: verified out of band");
    });

    await t.step("add members and list them in pages", async () => {
      // User creation is another admin route's job: the accounts are seeded in the server's database.
      const database = await openDatabase({ kind: "postgres", url: server.databaseUrl, maxConnections: 1 });
      const ids: string[] = [];
      try {
        const realm = await database.db.selectFrom("realms").select("id").where("is_default", "=", true)
          .executeTakeFirstOrThrow();
        const seed = seeder(database.db);
        for (let i = 0; i < 5; i++) ids.push(await seed.user(realm.id));
      } finally {
        await database.close();
      }
      for (const userId of ids) {
        const added = await call("POST", `/svc-admin/organizations/${orgId}/members`, root, { userId });
        assert.equal(added.status, 201, JSON.stringify(added.json));
      }
      const seen: string[] = [];
      for (let offset = 0;; offset += 2) {
        const page = await call(
          "GET",
          `/svc-admin/organizations/${orgId}/members?offset=${offset}&limit=2`,
          root,
        );
        assert.equal(page.status, 200, JSON.stringify(page.json));
        assert.equal(page.json.total, ids.length);
        seen.push(...page.json.items.map((m: { userId: string }) => m.userId));
        if (page.json.items.length < 2) break;
      }
      assert.deepEqual(seen, ids, "membership order, each member once");
    });

    await t.step("the chain verifies", async () => {
      const report = await call("GET", "/svc-admin/audit/verify", root);
      assert.equal(report.status, 200);
      assert.equal(report.json.valid, true, JSON.stringify(report.json));
    });
  } finally {
    await server.close();
  }
});
