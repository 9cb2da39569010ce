/**
 * Roles through the real server (`svc start` on a fresh Postgres database), over HTTP as the
 * bootstrap administrator: a user is created in the server's database with a password, a role
 * granting the declared permission `docs:org:read` (published through `SVC_CONFIG_FILE`) is
 * created and assigned to them in an organization; the user signs in and sees the grant in
 * `GET /profile/permissions`. An organization administrator's attempt to give itself
 * `svc:global:*` through an org-level role is refused (403 `escalation_refused`).
 */
import { strict as assert } from "node:assert";
import { hashArgon2id } from "../../core/passwords/argon2id.ts";
import { openDatabase } from "../../storage/open.ts";
import { createSqlPasswordCredentialStore } from "../../storage/sql/password-credentials.ts";
import { seeder } from "../support/seed.ts";
import { httpClient, startTestServer } from "../support/server.ts";
import { ManualClock } from "../../core/clock.ts";
import { cryptoRandom } from "../../core/random.ts";

Deno.test("e2e: create a role, assign it, the user sees the grant; escalation refused", async (t) => {
  const configFile = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(
    configFile,
    JSON.stringify({ authz: { permissions: [{ id: "docs:org:read", description: "Read documents" }] } }),
  );
  const server = await startTestServer({ SVC_CONFIG_FILE: configFile });
  const database = await openDatabase({ kind: "postgres", url: server.databaseUrl, maxConnections: 2 });
  const { call, signIn } = httpClient(server.url);
  /** A user of the default realm with a password, member of `orgId`, created in the database. */
  const createUser = async (realmId: string, orgId: string, password: string) => {
    const seed = seeder(database.db);
    const id = await seed.user(realmId);
    await database.db.insertInto("org_memberships").values({
      org_id: orgId,
      user_id: id,
      created_at: new Date(),
    })
      .execute();
    const hash = await hashArgon2id(
      password,
      { memoryKiB: 8192, iterations: 1, parallelism: 1 },
      crypto.getRandomValues(new Uint8Array(16)),
    );
    await createSqlPasswordCredentialStore(database.db, {
      clock: new ManualClock(Date.now()),
      random: cryptoRandom,
    })
      .replace(id, { algorithm: "argon2id", hash });
    const { email } = await database.db.selectFrom("users").select("email").where("id", "=", id)
      .executeTakeFirstOrThrow();
    return { id, email };
  };

  try {
    const root = await signIn(server.adminEmail, server.adminPassword);
    const realm = await database.db.selectFrom("realms").select("id").where("is_default", "=", true)
      .executeTakeFirstOrThrow();
    const orgId = await seeder(database.db).org(realm.id);
    const user = await createUser(realm.id, orgId, "reader's password");

    await t.step("create a role with a docs:org:read grant, assign it, see it as the user", async () => {
      const role = await call("POST", "/svc-admin/roles", root, {
        key: "doc-reader",
        displayName: "Document reader",
        orgId,
        grants: [{ pattern: "docs:org:read", effect: "Allow" }],
      });
      assert.equal(role.status, 201, JSON.stringify(role.json));
      assert.match(role.json.id, /^[0-9a-f-]{36}$/);
      const assignment = await call("POST", "/svc-admin/role-assignments", root, {
        roleId: role.json.id,
        principalKind: "User",
        principalId: user.id,
        orgId,
      });
      assert.equal(assignment.status, 201, JSON.stringify(assignment.json));
      const token = await signIn(user.email, "reader's password", orgId);
      const permissions = await call("GET", "/profile/permissions", token);
      assert.equal(permissions.status, 200);
      assert.deepEqual(permissions.json.permissions, ["docs:org:read"]);
    });

    await t.step("an org admin cannot give itself svc:global:* through an org-level role", async () => {
      const admin = await createUser(realm.id, orgId, "org admin's password");
      const adminRole = await call("POST", "/svc-admin/roles", root, {
        key: "org-admin",
        displayName: "Org admin",
        orgId,
        grants: [{ pattern: "svc:org:*", effect: "Allow" }],
      });
      assert.equal(adminRole.status, 201);
      assert.equal(
        (await call("POST", "/svc-admin/role-assignments", root, {
          roleId: adminRole.json.id,
          principalKind: "User",
          principalId: admin.id,
        })).status,
        201,
      );
      const token = await signIn(admin.email, "org admin's password", orgId);
      const attempt = await call("POST", "/svc-admin/roles", token, {
        key: "takeover",
        displayName: "Takeover",
        orgId,
        grants: [{ pattern: "svc:global:*", effect: "Allow" }],
      });
      assert.equal(attempt.status, 403, JSON.stringify(attempt.json));
      assert.equal(attempt.json.error.code, "escalation_refused");
      const allowed = await call("POST", "/svc-admin/roles", token, {
        key: "doc-reader-2",
        displayName: "Reader",
        orgId,
        grants: [{ pattern: "docs:org:read", effect: "Allow" }],
      });
      assert.equal(allowed.status, 201, JSON.stringify(allowed.json));
    });
  } finally {
    await database.close();
    await server.close();
    await Deno.remove(configFile);
  }
});
