/**
 * Account flows and enumeration against the real server (issue 19 items 6 and 7): `svc start`
 * on a fresh Postgres database, attacked over HTTP.
 *
 * - A forgot-password flood from one address answers 202 every time, and the outbox holds at
 *   most the per-account limit of reset mails.
 * - A passkey login options flood from one address gets 429 with Retry-After.
 * - Username-first passkey options for an unknown address and for the bootstrap administrator
 *   (who has no passkey) have a real answer's shape, and each is the same after a restart of
 *   the server on the same database.
 */
import { strict as assert } from "node:assert";
import postgres from "postgres";
import { fromBase64Url } from "../../core/encoding.ts";
import { DECOY_PROFILES } from "../../core/passkeys/decoy.ts";
import {
  FAST_SERVER_PASSWORD_ENV,
  freshServerDatabase,
  type RealServer,
  startServer,
} from "../support/server.ts";

const ADMIN = "root@example.test";

Deno.test("account flows and passkey enumeration against the real server", async (t) => {
  const database = await freshServerDatabase();
  const env = {
    SVC_PORT: "0",
    SVC_DATABASE_URL: database.url,
    SVC_BOOTSTRAP_ADMIN_EMAIL: ADMIN,
    SVC_BOOTSTRAP_ADMIN_PASSWORD: "bootstrap secret",
    SVC_MAINTENANCE_INTERVAL_SECONDS: "0",
    SVC_TRUSTED_PROXIES: "127.0.0.1",
    ...FAST_SERVER_PASSWORD_ENV,
  };
  const sqlClient = postgres(database.url, { max: 1, onnotice: () => {} });
  let server: RealServer | null = await startServer("deno", env);
  const from = (ip: string) => ({ "X-Forwarded-For": ip });
  const options = async (url: string, email: string, ip: string) => {
    const res = await fetch(`${url}/auth/passkey/login/options`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...from(ip) },
      body: JSON.stringify({ email }),
    });
    assert.equal(res.status, 200);
    return (await res.json()).options as {
      allowCredentials: { id: string; type: string; transports: string[] }[];
      [key: string]: unknown;
    };
  };
  try {
    await t.step("forgot-password flood: always 202, at most 3 reset mails", async () => {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`${server!.url}/auth/password/forgot`, {
            method: "POST",
            headers: { "Content-Type": "application/json", ...from("198.51.100.9") },
            body: JSON.stringify({ email: ADMIN }),
          }).then(async (res) => ({ status: res.status, body: await res.json() }))),
      );
      assert.ok(answers.every((a) => a.status === 202 && a.body.status === "accepted"));
      // The mails are queued after the answers (the same timing whether the account exists): wait
      // for the first, then for the count to hold still for a second (a loaded machine can take
      // more than a second to start them), at most 30 s.
      let count = -1;
      const deadline = Date.now() + 30_000;
      for (let settled = 0; settled < 5 && Date.now() < deadline;) {
        await new Promise((r) => setTimeout(r, 200));
        const [row] = await sqlClient`SELECT count(*)::int AS n FROM mail_outbox
          WHERE lower(recipient) = ${ADMIN} AND kind = 'password_reset'`;
        settled = row.n === count && row.n > 0 ? settled + 1 : 0;
        count = row.n;
      }
      assert.equal(count, 3);
    });

    await t.step("passkey login options flood: 429 with Retry-After past 30", async () => {
      const statuses = [];
      let retryAfter = null;
      for (let i = 0; i < 35; i++) {
        const res = await fetch(`${server!.url}/auth/passkey/login/options`, {
          headers: from("198.51.100.10"),
        });
        statuses.push(res.status);
        if (res.status === 429) {
          retryAfter = res.headers.get("Retry-After");
          assert.equal((await res.json()).error.code, "login_blocked");
        } else await res.body?.cancel();
      }
      assert.deepEqual(statuses, [...Array(30).fill(200), ...Array(5).fill(429)]);
      assert.ok(Number(retryAfter) > 0 && Number(retryAfter) <= 300);
    });

    const unknown = await options(server.url, "nobody@example.test", "198.51.100.20");
    const admin = await options(server.url, ADMIN, "198.51.100.20");

    await t.step("username-first options: unknown and passkey-less users get a real answer's shape", () => {
      for (const answer of [unknown, admin]) {
        const { allowCredentials, challenge, ...rest } = answer;
        assert.deepEqual(Object.keys(rest).sort(), ["rpId", "timeout", "userVerification"]);
        assert.equal(typeof challenge, "string");
        assert.ok(allowCredentials.length >= 1 && allowCredentials.length <= 3);
        for (const c of allowCredentials) {
          assert.deepEqual(Object.keys(c).sort(), ["id", "transports", "type"]);
          assert.ok(DECOY_PROFILES.some((p) =>
            p.idBytes === fromBase64Url(c.id).length &&
            JSON.stringify(p.transports) === JSON.stringify(c.transports)
          ));
        }
      }
      assert.notDeepEqual(unknown.allowCredentials, admin.allowCredentials);
    });

    await t.step("the same decoys after a restart on the same database", async () => {
      await server!.stop();
      server = null;
      server = await startServer("deno", env);
      assert.deepEqual(
        (await options(server.url, "nobody@example.test", "198.51.100.21")).allowCredentials,
        unknown.allowCredentials,
      );
      assert.deepEqual(
        (await options(server.url, ADMIN, "198.51.100.21")).allowCredentials,
        admin.allowCredentials,
      );
    });
  } finally {
    await server?.stop();
    await sqlClient.end();
    await database.drop();
  }
});
