/**
 * Impersonation and break-glass against the real server (issue 12): `svc start` on a fresh
 * Postgres database, over HTTP.
 *
 * - The administrator impersonates a user with a reason (no consent mode): the token carries
 *   `act` and the banner; it cannot change the target's factors; ending it stops the token.
 * - `svc break-glass create --realm default` (the CLI, on the server's database) prints a
 *   password; the account signs in through `POST /auth/login`; the status reports the use and
 *   rotation required; `POST /svc-admin/break-glass/rotate` clears it; a drill with the new
 *   password is recorded; `/readyz` reports the drill check to the administrator (a new account
 *   is not overdue) and only the check names to anyone else.
 */
import { strict as assert } from "node:assert";
import { fromBase64Url } from "../../core/encoding.ts";
import {
  childEnv,
  collect,
  FAST_SERVER_PASSWORD_ENV,
  httpClient,
  ROOT,
  startTestServer,
} from "../support/server.ts";

Deno.test("impersonation and break-glass against the real server", async (t) => {
  const server = await startTestServer();
  const { call, signIn } = httpClient(server.url);
  try {
    const root = await signIn(server.adminEmail, server.adminPassword);

    await t.step("impersonate with a reason, then end: the token stops", async () => {
      const invited = await call("POST", "/svc-admin/users/invite", root, { email: "target@example.test" });
      assert.equal(invited.status, 201, JSON.stringify(invited.json));
      const targetUserId = invited.json.userId as string;
      const noReason = await call("POST", "/svc-admin/impersonation", root, { targetUserId });
      assert.equal(noReason.status, 400);
      const started = await call("POST", "/svc-admin/impersonation", root, {
        targetUserId,
        reason: "ticket 99",
      });
      assert.equal(started.status, 201, JSON.stringify(started.json));
      const { accessToken, impersonationId } = started.json;
      const claims = JSON.parse(new TextDecoder().decode(fromBase64Url(accessToken.split(".")[1])));
      assert.equal(claims.sub, targetUserId);
      assert.equal(claims.act.imp, impersonationId);
      const me = await call("GET", "/profile/me", accessToken);
      assert.equal(me.status, 200);
      assert.equal(me.json.impersonation.impersonationId, impersonationId);
      const factor = await call("POST", "/profile/factors/totp", accessToken);
      assert.equal(factor.status, 403);
      assert.equal(factor.json.error.code, "impersonation_forbidden");
      const ended = await call("POST", `/svc-admin/impersonation/${impersonationId}/end`, root);
      assert.equal(ended.status, 200);
      assert.equal((await call("GET", "/profile/me", accessToken)).status, 401);
      const past = await call(
        "GET",
        `/svc-admin/impersonation?targetUserId=${targetUserId}&state=past`,
        root,
      );
      assert.equal(past.json.items[0].id, impersonationId);
    });

    let password = "";
    await t.step("the CLI creates the break-glass account and prints its password once", async () => {
      const child = new Deno.Command(`${ROOT}node_modules/.bin/deno`, {
        args: ["run", "-A", "cli/deno.ts", "break-glass", "create", "--realm", "default"],
        cwd: ROOT,
        env: childEnv({ SVC_DATABASE_URL: server.databaseUrl, ...FAST_SERVER_PASSWORD_ENV }),
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const [out, err, status] = await Promise.all([
        collect(child.stdout),
        collect(child.stderr),
        child.status,
      ]);
      assert.equal(status.code, 0, err);
      password = /^password: (\S+)$/m.exec(out)![1];
      assert.equal(password.length, 32);
    });

    await t.step("sign in with it; status reports the use and rotation required; rotate; drill", async () => {
      const token = await signIn("break-glass@break-glass.invalid", password);
      const claims = JSON.parse(new TextDecoder().decode(fromBase64Url(token.split(".")[1])));
      assert.equal(claims.mfa, "BreakGlass");
      const status = await call("GET", "/svc-admin/break-glass/status", root);
      assert.equal(status.status, 200);
      assert.ok(status.json.lastUseAt);
      assert.equal(status.json.rotationRequired, true);
      assert.equal(status.json.drillOverdue, false, "created seconds ago: its first drill is not due yet");
      const ready = await call("GET", "/readyz", root);
      assert.equal(ready.status, 200);
      assert.deepEqual(ready.json.checks.break_glass_drill, { status: "ok", critical: false });
      const anonymous = await call("GET", "/readyz", null);
      assert.equal(anonymous.status, 200);
      assert.deepEqual(anonymous.json.checks, ["database", "key_ring", "break_glass_drill"], "names only");

      const rotated = await call("POST", "/svc-admin/break-glass/rotate", root);
      assert.equal(rotated.status, 200, JSON.stringify(rotated.json));
      assert.equal((await call("GET", "/profile/me", token)).status, 401, "the break-glass session ended");
      const after = await call("GET", "/svc-admin/break-glass/status", root);
      assert.equal(after.json.rotationRequired, false);

      const drilled = await call("POST", "/svc-admin/break-glass/drill", root, {
        password: rotated.json.password,
      });
      assert.equal(drilled.status, 200, JSON.stringify(drilled.json));
      assert.equal(drilled.json.drillOverdue, false);
      assert.deepEqual((await call("GET", "/readyz", root)).json.checks.break_glass_drill, {
        status: "ok",
        critical: false,
      });
      const entries = await call("GET", "/svc-admin/audit/entries?limit=1000", root);
      const actions = (entries.json.entries as { action: string }[]).map((e: { action: string }) => e.action);
      for (
        const action of [
          "impersonation.start",
          "impersonation.end",
          "breakglass.account.create",
          "breakglass.rotate",
          "breakglass.drill",
        ]
      ) {
        assert.ok(actions.includes(action), `${action} in ${actions.join(",")}`);
      }
    });
  } finally {
    await server.close();
  }
});
