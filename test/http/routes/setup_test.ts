/**
 * The first-run setup link over HTTP (issue 27): `POST /setup/admin` creates the default realm's
 * first administrator once, with a token `issueSetupToken` made (stored hashed); validated
 * (U+0000, unknown members, the password policy), no-store, one audit entry, 410 for an unknown,
 * used or expired token, 409 once an administrator exists. On real Postgres, 20 concurrent
 * redemptions of one link create exactly one administrator, and two links raced create one.
 */
import { strict as assert } from "node:assert";
import { issueSetupToken, SETUP_TOKEN_TTL_MS } from "../../../core/accounts/first-admin.ts";
import { SVC_ADMIN_ROLE_KEY } from "../../../core/accounts/bootstrap.ts";
import { sha256Hex } from "../../../core/digest.ts";
import { createApp } from "../../../http/app.ts";
import { setupRoutes } from "../../../http/routes/setup.ts";
import { createSqlSetupTokenStore } from "../../../storage/sql/setup-tokens.ts";
import { type LoginBed, loginBed, type LoginBedOptions } from "../../support/login.ts";

async function setupBed(options: LoginBedOptions = {}) {
  const bed = await loginBed({}, options);
  const app = createApp({
    config: bed.config,
    readinessChecks: [],
    clock: bed.clock,
    random: bed.random,
    authenticator: bed.auth.authenticator,
    routes: [
      ...bed.auth.routes,
      ...bed.login.routes,
      setupRoutes({ storage: bed.storage, passwords: bed.login.passwords }),
    ],
    logError: (line) => console.error(line),
  });
  const post = (path: string, body: unknown) =>
    Promise.resolve(app.request(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }, { clientAddress: "203.0.113.10" }));
  const deps = {
    storage: bed.storage,
    clock: bed.clock,
    random: bed.random,
    setupTokens: (s: typeof bed.storage) => createSqlSetupTokenStore(s.pluginSql),
  };
  const issue = async () => (await issueSetupToken(deps, bed.realmId)).token;
  return { bed, post, issue };
}

async function admins(bed: LoginBed): Promise<number> {
  const role = await bed.storage.roles.getByKey(bed.realmId, SVC_ADMIN_ROLE_KEY, null);
  return role === null ? 0 : (await bed.storage.roles.listAssignmentsOfRole(role.id)).length;
}

async function userCreates(bed: LoginBed): Promise<number> {
  return (await bed.storage.adminAudit.list(bed.realmId, { limit: 1000 })).filter((e) =>
    e.action === "user.create"
  ).length;
}

Deno.test("setup link: validated, single-use, one audit entry, no-store, then sign-in works", async (t) => {
  const { bed, post, issue } = await setupBed();
  try {
    const token = await issue();
    const stored = await bed.storage.pluginSql.query<{ token_hash: string }>(
      "SELECT token_hash FROM setup_tokens",
    );
    assert.deepEqual(stored.map((r) => r.token_hash), [sha256Hex(token)], "only the hash is stored");

    await t.step("bad bodies: 400, and the token stays usable", async () => {
      for (
        const bad of [
          {},
          { token, email: "a\u0000@example.test", password: "long enough password" },
          { token, email: "admin@example.test", password: "long enough password", extra: 1 },
          { token, email: "admin@example.test", password: "short" },
        ]
      ) {
        const res = await post("/setup/admin", bad);
        assert.equal(res.status, 400, JSON.stringify(bad));
        assert.equal(res.headers.get("Cache-Control"), "no-store");
        await res.body?.cancel();
      }
      assert.equal(await admins(bed), 0);
    });

    await t.step("an unknown token: 410 setup_link_invalid", async () => {
      const res = await post("/setup/admin", {
        token: "x".repeat(43),
        email: "a@example.test",
        password: "long enough password",
      });
      assert.equal(res.status, 410);
      assert.equal((await res.json()).error.code, "setup_link_invalid");
    });

    await t.step("the link creates the administrator once; the password signs in", async () => {
      const res = await post("/setup/admin", {
        token,
        email: "Admin@Example.test",
        password: "long enough password",
        displayName: "First Admin",
      });
      assert.equal(res.status, 201, await res.clone().text());
      assert.equal(res.headers.get("Cache-Control"), "no-store");
      const body = await res.json();
      assert.equal(body.email, "admin@example.test");
      assert.equal(await admins(bed), 1);
      assert.equal(await userCreates(bed), 1);
      const entry = (await bed.storage.adminAudit.list(bed.realmId, { limit: 100 })).find((e) =>
        e.action === "user.create"
      )!;
      assert.equal(entry.actorId, "svc:setup");
      assert.ok(!JSON.stringify(entry).includes("long enough password"), "no password in the audit entry");
      const login = await post("/auth/login", {
        email: "admin@example.test",
        password: "long enough password",
      });
      assert.equal(login.status, 200, await login.clone().text());
      await login.body?.cancel();
      const again = await post("/setup/admin", {
        token,
        email: "b@example.test",
        password: "long enough password",
      });
      assert.equal(again.status, 410);
      await again.body?.cancel();
    });

    await t.step("once an administrator exists, a new link answers 409 and changes nothing", async () => {
      const fresh = await issue();
      const res = await post("/setup/admin", {
        token: fresh,
        email: "c@example.test",
        password: "long enough password",
      });
      assert.equal(res.status, 409);
      assert.equal((await res.json()).error.code, "administrator_exists");
      assert.equal(await admins(bed), 1);
      assert.equal(await userCreates(bed), 1);
    });
  } finally {
    await bed.close();
  }
});

Deno.test("setup link: expires after its TTL", async () => {
  const { bed, post, issue } = await setupBed();
  try {
    const token = await issue();
    bed.clock.advance(SETUP_TOKEN_TTL_MS + 1);
    const res = await post("/setup/admin", {
      token,
      email: "a@example.test",
      password: "long enough password",
    });
    assert.equal(res.status, 410);
    await res.body?.cancel();
    assert.equal(await admins(bed), 0);
  } finally {
    await bed.close();
  }
});

Deno.test("setup link on Postgres: 20 concurrent redemptions create exactly one administrator", async () => {
  const { bed, post, issue } = await setupBed({ postgres: true });
  try {
    const token = await issue();
    const answers = await Promise.all(
      Array.from(
        { length: 20 },
        (_, i) =>
          post("/setup/admin", { token, email: `racer${i}@example.test`, password: "long enough password" }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    await Promise.all(answers.map((r) => r.body?.cancel()));
    assert.equal(statuses.filter((s) => s === 201).length, 1, String(statuses));
    assert.ok(statuses.every((s) => s === 201 || s === 410 || s === 409), String(statuses));
    assert.equal(await admins(bed), 1);
    assert.equal(await userCreates(bed), 1);
    const users = await bed.storage.pluginSql.query("SELECT id FROM users");
    assert.equal(users.length, 1);
  } finally {
    await bed.close();
  }
});

Deno.test("setup link on Postgres: two links raced create one administrator", async () => {
  const { bed, post, issue } = await setupBed({ postgres: true });
  try {
    const tokens = [await issue(), await issue()];
    const answers = await Promise.all(
      Array.from(
        { length: 10 },
        (_, i) =>
          post("/setup/admin", {
            token: tokens[i % 2],
            email: `two${i}@example.test`,
            password: "long enough password",
          }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    await Promise.all(answers.map((r) => r.body?.cancel()));
    assert.equal(statuses.filter((s) => s === 201).length, 1, String(statuses));
    assert.equal(await admins(bed), 1);
  } finally {
    await bed.close();
  }
});
