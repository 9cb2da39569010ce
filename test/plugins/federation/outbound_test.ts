/**
 * The federation flow behind the outbound guard, on the Hono app of a plugin bed (as `svc start`
 * builds it): an organization administrator can name any issuer, and `GET /federation/start` is
 * unauthenticated, so
 *
 * - an issuer on the loopback (not in `SVC_OUTBOUND_ALLOW_PRIVATE`) or at the cloud metadata
 *   address is refused when registered, and never fetched when stored all the same (an allowance
 *   withdrawn since);
 * - every outbound failure gets one neutral answer (status, code and page identical), whether the
 *   address was refused, the port closed, or an allowed port open but not an OpenID provider:
 *   the answers cannot be used to scan internal ports.
 */
import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { federationPlugin } from "../../../plugins/federation/mod.ts";
import { UPSTREAM_FAILURE_CODE } from "../../../plugins/federation/flow.ts";
import { pluginBed } from "../../support/plugins.ts";
import { seeder } from "../../support/seed.ts";

function freePort(hostname: string): number {
  const probe = Deno.listen({ hostname, port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  return port;
}

Deno.test("federation start: inward issuers are never fetched, and every outbound failure answers alike", async () => {
  const hits: string[] = [];
  const serve = (hostname: string, answer: () => Response) =>
    Deno.serve({ hostname, port: 0, onListen() {} }, (req) => {
      hits.push(`${hostname} ${new URL(req.url).pathname}`);
      return answer();
    });
  // 127.0.0.1 stands for an internal service; 127.0.0.2 is the one address the operator allows,
  // open, answering JSON that is no discovery document of the issuer (a distinct failure inside).
  const internal = serve(
    "127.0.0.1",
    () => new Response("<h1>router admin</h1>", { status: 404, headers: { "Content-Type": "text/html" } }),
  );
  const allowed = serve("127.0.0.2", () => Response.json({ issuer: "https://someone-else.example" }));
  const plugged = await pluginBed([federationPlugin()], {
    SVC_FEDERATION_ALLOW_HTTP_ISSUERS: "true",
    SVC_OUTBOUND_ALLOW_PRIVATE: "127.0.0.2",
  });
  try {
    const bed = plugged.admin.bed;
    const realmId = bed.realmId;
    const seed = seeder(bed.database.db);
    const admin = await seed.user(realmId);
    const org = await seed.org(realmId, [admin]);
    const role = await seed.role(realmId, "federation-admin", [{ pattern: "federation:global:*" }]);
    await seed.assign(realmId, role, { kind: "User", id: admin });
    await bed.snapshots.invalidateAll();
    const token =
      (await bed.auth.sessions.signIn({ realmId, userId: admin, orgId: null, mfa: "MultiFactor" }))
        .tokens.accessToken;
    const create = (issuer: string) =>
      plugged.app.request("/svc-admin/federation/providers", {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ orgId: org, issuer, clientId: "svc", clientSecret: "the client secret" }),
      });
    const provider = async (issuer: string) => {
      const res = await create(issuer);
      assert.equal(res.status, 201, await res.clone().text());
      return (await res.json()).id as string;
    };
    const startOf = async (id: string) => {
      const res = await plugged.app.request(`/federation/start?provider=${id}`);
      return { status: res.status, body: await res.text() };
    };
    const start = async (issuer: string) => startOf(await provider(issuer));
    /** A provider whose stored issuer is `issuer` (registered on an allowed address, then changed). */
    const stored = async (issuer: string) => {
      const id = await provider(`http://127.0.0.2:${allowed.addr.port}`);
      await sql`UPDATE federation_providers SET issuer = ${issuer} WHERE id = ${id}`.execute(bed.database.db);
      return id;
    };

    // An issuer plainly inward is refused when it is registered…
    for (
      const issuer of [
        `http://127.0.0.1:${internal.addr.port}`,
        "http://169.254.169.254",
        "https://169.254.169.254/computeMetadata",
        `http://[::ffff:7f00:1]:${internal.addr.port}`,
      ]
    ) {
      const res = await create(issuer);
      assert.equal(res.status, 400, issuer);
      assert.match((await res.json()).error.message, /private, loopback or metadata address/);
    }
    // …and one stored before the operator withdrew an allowance is refused at the fetch.
    const stale = await stored(`http://127.0.0.1:${internal.addr.port}`);
    const answers = {
      loopback: await startOf(stale),
      metadata: await startOf(await stored("http://169.254.169.254")),
      allowedClosedPort: await start(`http://127.0.0.2:${freePort("127.0.0.2")}`),
      allowedOpenPort: await start(`http://127.0.0.2:${allowed.addr.port}`),
    };
    assert.deepEqual(
      hits,
      [`127.0.0.2 /.well-known/openid-configuration`],
      "only the allowed address was fetched",
    );
    for (const [name, answer] of Object.entries(answers)) {
      assert.equal(answer.status, 502, name);
      assert.match(answer.body, new RegExp(`<code id="error-code">${UPSTREAM_FAILURE_CODE}</code>`), name);
      assert.equal(answer.body, answers.loopback.body, `${name}: the same page`);
    }
  } finally {
    await plugged.close();
    await internal.shutdown();
    await allowed.shutdown();
  }
});
