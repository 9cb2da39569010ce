/**
 * `POST /svc-admin/imports/{kind}` end to end over HTTP: imports of each kind, then sign-in
 * over HTTP as the imported users with their original passwords (bcrypt from Auth0, pbkdf2-sha256
 * from Keycloak, ASP.NET Identity V2/V3), after which the stored hash is argon2id; dry runs write
 * nothing (no audit entry either); a real import appends one audit entry with the counts; the
 * import body limit; unknown kinds and other realms are 404.
 */
import assert from "node:assert/strict";
import { adminBed } from "../../support/admin.ts";
import { ROLES, USER_CLAIMS, USER_ROLES, USERS } from "../../core/imports/aspnet_fixture.ts";

const FIXTURES = new URL("../../fixtures/imports/", import.meta.url);
const AUTH0 = await Deno.readTextFile(new URL("auth0-users.ndjson", FIXTURES));
const KEYCLOAK = await Deno.readTextFile(new URL("keycloak-realm.json", FIXTURES));

Deno.test("imports over HTTP: dry run, import, audit entry, then sign-in with the original passwords rehashes to argon2id", async (t) => {
  const bed = await adminBed({ SVC_MAX_IMPORT_BYTES: String(64 * 1024) });
  const storage = bed.bed.storage;
  const signIn = async (email: string, password: string) => {
    const res = await bed.bed.post("/auth/login", { email, password });
    const body = await res.json();
    return { status: res.status, token: body.accessToken as string | undefined };
  };
  const post = (path: string, body: string, contentType = "application/x-ndjson") =>
    bed.request("POST", path, { body, headers: { "Content-Type": contentType } });
  try {
    await t.step("auth0: a dry run reports the counts and writes nothing", async () => {
      const chain = await bed.chainLength();
      const res = await post("/svc-admin/imports/auth0?dryRun=true", AUTH0);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("Cache-Control"), "no-store");
      const report = await res.json();
      assert.equal(report.dryRun, true);
      assert.deepEqual(report.users, { created: 5, updated: 0, skipped: 0, total: 5 });
      assert.equal(await storage.users.findByEmail(bed.realmId, "ana@example.test"), null);
      assert.equal(await bed.chainLength(), chain, "a dry run appends no audit entry");
    });

    await t.step("auth0: the import appends one audit entry with the counts", async () => {
      const chain = await bed.chainLength();
      const res = await post(`/svc-admin/imports/auth0?realm=${bed.realmId}&dryRun=false`, AUTH0);
      assert.equal(res.status, 200);
      const report = await res.json();
      assert.deepEqual(report.users, { created: 5, updated: 0, skipped: 0, total: 5 });
      assert.equal(report.issues.length, 5);
      assert.equal(await bed.chainLength(), chain + 1);
      const entries = await storage.adminAudit.list(bed.realmId, { limit: 10_000 });
      const entry = entries.at(-1)!;
      assert.equal(entry.action, "import.auth0");
      assert.deepEqual((entry.after as Record<string, unknown>).users, report.users);
    });

    await t.step("keycloak and aspnet imports", async () => {
      let res = await post("/svc-admin/imports/keycloak", KEYCLOAK, "application/json");
      assert.equal(res.status, 200);
      assert.equal((await res.json()).users.created, 3);
      const aspnet = JSON.stringify({
        AspNetUsers: USERS,
        AspNetRoles: ROLES,
        AspNetUserRoles: USER_ROLES,
        AspNetUserClaims: USER_CLAIMS,
      });
      res = await post("/svc-admin/imports/aspnet", aspnet, "application/json");
      assert.equal(res.status, 200);
      assert.equal((await res.json()).users.created, 4);
    });

    await t.step("sign-in with the original passwords; the stored hash becomes argon2id", async () => {
      const cases = [
        { email: "ana@example.test", password: "U*U", from: "bcrypt" },
        { email: "bo@example.test", password: "bo password", from: "bcrypt" },
        { email: "alice@acme.test", password: "kc password", from: "pbkdf2-sha256" },
        { email: "vera@example.test", password: "my password", from: "framework-identity-v3" },
        { email: "xena@example.test", password: "my password", from: "framework-identity-v3" },
      ];
      for (const { email, password, from } of cases) {
        const user = (await storage.users.findByEmail(bed.realmId, email))!;
        assert.equal((await storage.passwordCredentials.get(user.id))!.algorithm, from, email);
        assert.equal((await signIn(email, password + "!")).status, 401, email);
        const ok = await signIn(email, password);
        assert.equal(ok.status, 200, email);
        assert.ok(ok.token, email);
        const rows = await storage.passwordCredentials.list(user.id);
        assert.deepEqual(rows.map((r) => r.algorithm), ["argon2id"], email);
      }
      // Suspended users (an Auth0 block, a Keycloak disabled user, an active ASP.NET lockout) cannot sign in.
      assert.notEqual((await signIn("walt@example.test", "my password")).status, 200);
      assert.notEqual((await signIn("bob@acme.test", "legacy password")).status, 200);
    });

    await t.step("a re-import after the rehash does not bring the old hash back", async () => {
      const res = await post("/svc-admin/imports/auth0", AUTH0);
      const report = await res.json();
      assert.deepEqual(report.users.created + report.users.updated, 0);
      assert.ok(
        report.issues.some((i: { entity: string; key: string }) =>
          i.entity === "Credential" && i.key === "ana@example.test"
        ),
      );
      assert.equal((await signIn("ana@example.test", "U*U")).status, 200);
      const ana = (await storage.users.findByEmail(bed.realmId, "ana@example.test"))!;
      assert.equal((await storage.passwordCredentials.get(ana.id))!.algorithm, "argon2id");
    });

    await t.step("clients: generated secrets in the answer only", async () => {
      const res = await post(
        "/svc-admin/imports/clients",
        JSON.stringify([{ ClientId: "erp", ClientType: "confidential" }]),
        "application/json",
      );
      const report = await res.json();
      assert.equal(typeof report.generatedClientSecrets.erp, "string");
      const entries = await storage.adminAudit.list(bed.realmId, { limit: 10_000 });
      assert.ok(
        !JSON.stringify(entries).includes(report.generatedClientSecrets.erp),
        "no secret in the audit chain",
      );
    });

    await t.step("aspnet: a CSV of AspNetUsers", async () => {
      const csv = "Id,Email,EmailConfirmed,PasswordHash,LockoutEnd\r\nz1,zed@example.test,t,,\r\n";
      const res = await post("/svc-admin/imports/aspnet?dryRun=true", csv, "text/csv");
      assert.deepEqual((await res.json()).users, { created: 1, updated: 0, skipped: 0, total: 1 });
    });

    await t.step(
      "refusals: body limit 413, unknown kind and other realm 404, bad query 400, org admin 403",
      async () => {
        let res = await post("/svc-admin/imports/auth0", "x".repeat(65 * 1024));
        assert.equal(res.status, 413);
        res = await post("/svc-admin/imports/okta", "{}");
        assert.equal(res.status, 404);
        res = await post(`/svc-admin/imports/auth0?realm=${crypto.randomUUID()}`, AUTH0);
        assert.equal(res.status, 404);
        res = await post("/svc-admin/imports/auth0?dryRun=yes", AUTH0);
        assert.equal(res.status, 400);
        res = await bed.request("POST", "/svc-admin/imports/auth0", { as: "orgA", body: AUTH0 });
        assert.equal(res.status, 403);
        res = await post("/svc-admin/imports/keycloak", "{broken", "application/json");
        assert.equal(res.status, 200);
        assert.equal((await res.json()).issues[0].severity, "Error");
      },
    );
  } finally {
    await bed.close();
  }
});
