/**
 * Dynamic client registration (RFC 7591) with initial access tokens, through the app:
 *
 * - off by default: no `registration_endpoint` in discovery, `/oidc/register` answers 404;
 * - initial access tokens: minted (shown once, `no-store`, stored hashed), listed, read, revoked,
 *   one audit entry per change and none for a repeat revoke; refused under impersonation;
 * - the registration: 401 `invalid_token` without a usable token (none, unknown, another
 *   realm's, expired, spent, revoked); the RFC 7591 3.2.2 errors for metadata svc cannot honour
 *   (none of which takes a use of the token); the 201 answer with the secret and the metadata as
 *   registered, `no-store`; the client listed for administrators as dynamically registered, the
 *   `oidc.client_created` event, one audit entry by the token's service actor.
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { builtinPlugins } from "../../../plugins/builtin.ts";
import { initialAccessTokenStore } from "../../../plugins/oidc-provider/initial-access-tokens.ts";
import { registeredMetadata, RegistrationError } from "../../../plugins/oidc-provider/registration.ts";
import { type PluginBed, pluginBed } from "../../support/plugins.ts";

const plugin = () => builtinPlugins().find((candidate) => candidate.name === "oidc-provider")!;
const ON = { SVC_PLUGINS: "oidc-provider", SVC_OIDC_REGISTRATION: "initial-token" };
const REDIRECT = "https://rp.example.test/cb";

/** POSTs a registration with `token` (null: none) and a JSON body (a string is sent as is). */
function register(beds: PluginBed, token: string | null, body: unknown): Promise<Response> {
  return Promise.resolve(beds.app.request("/oidc/register", {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  }));
}

async function mint(beds: PluginBed, body: unknown = {}): Promise<{ id: string; token: string }> {
  const res = await beds.request("POST", "/svc-admin/oidc/initial-access-tokens", { body });
  assert.equal(res.status, 201, await res.clone().text());
  return await res.json();
}

Deno.test("oidc-provider: registration is off by default", async () => {
  const beds = await pluginBed([plugin()], { SVC_PLUGINS: "oidc-provider" });
  try {
    const discovery = await (await beds.app.request("/.well-known/openid-configuration")).json();
    assert.equal(discovery.registration_endpoint, undefined);
    const { token } = await mint(beds);
    const res = await register(beds, token, { redirect_uris: [REDIRECT] });
    assert.equal(res.status, 404, await res.text());
    assert.equal((await beds.admin.bed.storage.clients.list(beds.admin.realmId)).length, 0);
  } finally {
    await beds.close();
  }
});

Deno.test("oidc-provider: initial access tokens and dynamic client registration", async (t) => {
  const beds = await pluginBed([plugin()], ON);
  const { bed, realmId } = beds.admin;
  try {
    await t.step("discovery names the registration endpoint", async () => {
      const discovery = await (await beds.app.request("/.well-known/openid-configuration")).json();
      assert.equal(discovery.registration_endpoint, `${discovery.issuer}/oidc/register`);
    });

    let minted: { id: string; token: string };
    await t.step("minting: the token once, no-store, hashed, one audit entry", async () => {
      const chain = await beds.admin.chainLength();
      const res = await beds.request("POST", "/svc-admin/oidc/initial-access-tokens", {
        body: { name: "partner portal", maxUses: 5, expiresInSeconds: 3600 },
      });
      assert.equal(res.status, 201);
      assert.equal(res.headers.get("Cache-Control"), "no-store");
      minted = await res.json();
      assert.match(minted.token, /^soi_[A-Za-z0-9_-]{43}$/);
      assert.equal((minted as unknown as Record<string, unknown>).status, "active");
      assert.equal(await beds.admin.chainLength() - chain, 1);
      const rows = await bed.storage.pluginSql.query<{ token_hash: string }>(
        "SELECT token_hash FROM oidc_provider_initial_access_tokens WHERE id = $1",
        [minted.id],
      );
      assert.notEqual(rows[0].token_hash, minted.token);
      assert.ok(!JSON.stringify(rows).includes(minted.token));
      const entries = await bed.database.db.selectFrom("admin_audit_entries").selectAll().execute();
      assert.ok(!JSON.stringify(entries).includes(minted.token), "the audit chain never holds the token");
      const listed = await (await beds.request("GET", "/svc-admin/oidc/initial-access-tokens")).json();
      assert.equal(listed.total, 1);
      assert.equal(listed.items[0].token, undefined);
      assert.equal(listed.items[0].maxUses, 5);
      const one = await (await beds.request("GET", `/svc-admin/oidc/initial-access-tokens/${minted.id}`))
        .json();
      assert.equal(one.name, "partner portal");
      assert.equal(one.uses, 0);
    });

    await t.step("minting refuses bad bodies", async () => {
      for (
        const body of [{ maxUses: 0 }, { expiresInSeconds: 10 }, { name: "a\u0000b" }, { extra: 1 }, {
          name: "x".repeat(5000),
        }]
      ) {
        const res = await beds.request("POST", "/svc-admin/oidc/initial-access-tokens", { body });
        assert.ok([400, 413].includes(res.status), `${JSON.stringify(body).slice(0, 40)}: ${res.status}`);
      }
    });

    await t.step("without a usable token: 401 invalid_token", async () => {
      const body = { redirect_uris: [REDIRECT] };
      const otherRealm = await bed.storage.realms.create({ name: "other-realm", displayName: "Other" });
      const other = await initialAccessTokenStore(bed.storage.pluginSql).create(
        crypto.randomUUID(),
        otherRealm.id,
        "soi_another-realms-token",
        { name: null, maxUses: null, expiresAt: null },
        new Date(bed.clock.now()),
      );
      assert.ok(other.id);
      for (
        const token of [null, "soi_unknown", "Basic abc", "soi_another-realms-token", minted.token + "x"]
      ) {
        const res = await register(beds, token, body);
        assert.equal(res.status, 401, `${token}`);
        assert.equal(res.headers.get("Cache-Control"), "no-store");
        if (token === null) {
          // RFC 6750 3.1: no authentication, no error information.
          assert.equal(res.headers.get("WWW-Authenticate"), 'Bearer realm="oidc"');
          assert.equal(await res.text(), "");
          continue;
        }
        assert.equal(res.headers.get("WWW-Authenticate"), 'Bearer error="invalid_token"');
        assert.equal((await res.json()).error, "invalid_token");
      }
    });

    await t.step("metadata svc cannot honour: the RFC 7591 errors, no use taken", async () => {
      const cases: [unknown, number, string][] = [
        [{}, 400, "invalid_redirect_uri"],
        [{ redirect_uris: ["http://rp.example.test/cb"] }, 400, "invalid_redirect_uri"],
        [{ redirect_uris: ["https://rp.example.test/cb#frag"] }, 400, "invalid_redirect_uri"],
        [{ redirect_uris: ["https://RP.example.test/cb"] }, 400, "invalid_redirect_uri"],
        [{ redirect_uris: ["com.example.app:/cb"], application_type: "native" }, 400, "invalid_redirect_uri"],
        [{ redirect_uris: ["http://127.0.0.1:8080/cb"] }, 400, "invalid_redirect_uri"],
        [{ redirect_uris: "https://rp.example.test/cb" }, 400, "invalid_redirect_uri"],
        [{ redirect_uris: [REDIRECT], grant_types: ["client_credentials"] }, 400, "invalid_client_metadata"],
        [{ redirect_uris: [REDIRECT], grant_types: ["implicit"] }, 400, "invalid_client_metadata"],
        [{ redirect_uris: [REDIRECT], response_types: ["token"] }, 400, "invalid_client_metadata"],
        [{ redirect_uris: [REDIRECT], scope: "openid admin" }, 400, "invalid_client_metadata"],
        [{ redirect_uris: [REDIRECT], scope: "profile" }, 400, "invalid_client_metadata"],
        [{ redirect_uris: [REDIRECT], scope: "openid offline_access" }, 400, "invalid_client_metadata"],
        [
          { redirect_uris: [REDIRECT], token_endpoint_auth_method: "tls_client_auth" },
          400,
          "invalid_client_metadata",
        ],
        [
          { redirect_uris: [REDIRECT], jwks_uri: "https://rp.example.test/jwks" },
          400,
          "invalid_client_metadata",
        ],
        [
          { redirect_uris: [REDIRECT], token_endpoint_auth_method: "private_key_jwt" },
          400,
          "invalid_client_metadata",
        ],
        [{ redirect_uris: [REDIRECT], id_token_signed_response_alg: "none" }, 400, "invalid_client_metadata"],
        [{ redirect_uris: [REDIRECT], client_uri: "http://rp.example.test" }, 400, "invalid_client_metadata"],
        [{ redirect_uris: [REDIRECT], client_name: "a\u0000b" }, 400, "invalid_client_metadata"],
        [{ redirect_uris: [REDIRECT], software_statement: "eyJ..." }, 400, "invalid_software_statement"],
        [["not", "an", "object"], 400, "invalid_client_metadata"],
        ["{not json", 400, "invalid_client_metadata"],
      ];
      for (const [body, status, error] of cases) {
        const res = await register(beds, minted.token, body);
        const answer = await res.json();
        assert.equal(res.status, status, JSON.stringify(body));
        assert.equal(answer.error, error, `${JSON.stringify(body)}: ${JSON.stringify(answer)}`);
        assert.equal(res.headers.get("Cache-Control"), "no-store");
      }
      const big = await register(beds, minted.token, {
        redirect_uris: [REDIRECT],
        client_name: "x".repeat(20_000),
      });
      assert.equal(big.status, 413);
      const one = await (await beds.request("GET", `/svc-admin/oidc/initial-access-tokens/${minted.id}`))
        .json();
      assert.equal(one.uses, 0, "refusals take no use");
      assert.equal((await bed.storage.clients.list(realmId)).length, 0);
    });

    await t.step(
      "a confidential client: 201 with its secret and metadata, listed as registered",
      async () => {
        const chain = await beds.admin.chainLength();
        const events = bed.events.length;
        const res = await register(beds, minted.token, {
          redirect_uris: [REDIRECT],
          client_name: "Partner App",
          client_uri: "https://rp.example.test",
          logo_uri: "https://rp.example.test/logo.png",
          contacts: ["ops@rp.example.test"],
          grant_types: ["authorization_code", "refresh_token"],
          token_endpoint_auth_method: "client_secret_post",
          post_logout_redirect_uris: ["https://rp.example.test/bye"],
          something_svc_does_not_know: true,
        });
        assert.equal(res.status, 201);
        assert.equal(res.headers.get("Cache-Control"), "no-store");
        const answer = await res.json();
        assert.match(answer.client_id, /^dyn-/);
        assert.match(answer.client_secret, /^soc_/);
        assert.equal(answer.client_secret_expires_at, 0);
        assert.equal(answer.client_id_issued_at, Math.floor(bed.clock.now() / 1000));
        assert.deepEqual(answer.redirect_uris, [REDIRECT]);
        assert.deepEqual(answer.grant_types, ["authorization_code", "refresh_token"]);
        assert.deepEqual(answer.response_types, ["code"]);
        assert.equal(answer.scope, "openid profile email offline_access");
        assert.equal(answer.token_endpoint_auth_method, "client_secret_post");
        assert.equal(answer.client_uri, "https://rp.example.test");
        assert.deepEqual(answer.contacts, ["ops@rp.example.test"]);
        assert.equal(answer.something_svc_does_not_know, undefined);
        assert.match(answer.registration_access_token, /^sor_/);

        assert.equal(await beds.admin.chainLength() - chain, 1, "one audit entry");
        const entry = await bed.database.db.selectFrom("admin_audit_entries").selectAll()
          .orderBy("seq", "desc").limit(1).executeTakeFirstOrThrow();
        assert.equal(entry.action, "oidc.client.register");
        assert.equal(entry.actor_kind, "System");
        assert.equal(entry.actor_id, `oidc-provider:initial-access-token:${minted.id}`);
        assert.ok(!JSON.stringify(entry).includes(answer.client_secret), "no secret in the audit entry");
        const created = bed.events.slice(events).filter((event) => event.kind === "oidc.client_created");
        assert.equal(created.length, 1);
        assert.equal(created[0].data.clientId, answer.client_id);
        assert.equal(created[0].data.dynamicallyRegistered, true);

        const listed = await (await beds.request("GET", "/svc-admin/oidc/clients")).json();
        const client = listed.items.find((item: { clientId: string }) => item.clientId === answer.client_id);
        assert.equal(client.dynamicallyRegistered, true);
        assert.equal(client.requireConsent, true);
        assert.equal(client.clientType, "confidential");
        assert.equal(client.tokenEndpointAuthMethod, "client_secret_post");
        assert.equal(client.clientName, "Partner App");
        assert.deepEqual(client.allowedScopes, ["openid", "profile", "email", "offline_access"]);
        assert.deepEqual(client.postLogoutRedirectUris, ["https://rp.example.test/bye"]);
        const one = await (await beds.request("GET", `/svc-admin/oidc/initial-access-tokens/${minted.id}`))
          .json();
        assert.equal(one.uses, 1);
        const stored = await bed.storage.pluginSql.query<{ metadata: Record<string, unknown> }>(
          "SELECT metadata FROM oidc_provider_registrations WHERE client_row_id = $1",
          [client.id],
        );
        assert.equal(stored[0].metadata.logo_uri, "https://rp.example.test/logo.png");
        // An administrator-made client is not marked.
        const made = await beds.request("POST", "/svc-admin/oidc/clients", {
          body: { clientId: "by-admin", clientType: "public", redirectUris: [REDIRECT] },
        });
        assert.equal((await made.json()).dynamicallyRegistered, false);
      },
    );

    await t.step("a native public client on a loopback redirect: no secret", async () => {
      const res = await register(beds, minted.token, {
        application_type: "native",
        redirect_uris: ["http://127.0.0.1:8765/cb"],
        token_endpoint_auth_method: "none",
        scope: "openid",
      });
      assert.equal(res.status, 201);
      const answer = await res.json();
      assert.equal(answer.client_secret, undefined);
      assert.equal(answer.client_secret_expires_at, undefined);
      const client = await bed.storage.clients.getByClientId(realmId, answer.client_id);
      assert.equal(client?.clientType, "public");
      assert.equal(client?.secretHash, null);
    });

    await t.step("a limited token stops at its uses; expiry and revocation end a token", async () => {
      const once = await mint(beds, { maxUses: 1 });
      assert.equal((await register(beds, once.token, { redirect_uris: [REDIRECT] })).status, 201);
      const spent = await register(beds, once.token, { redirect_uris: [REDIRECT] });
      assert.equal(spent.status, 401);
      const view = await (await beds.request("GET", `/svc-admin/oidc/initial-access-tokens/${once.id}`))
        .json();
      assert.equal(view.status, "spent");

      const brief = await mint(beds, { expiresInSeconds: 60 });
      bed.clock.advance(61_000);
      assert.equal((await register(beds, brief.token, { redirect_uris: [REDIRECT] })).status, 401);

      const revoked = await mint(beds);
      let chain = await beds.admin.chainLength();
      const gone = await beds.request("DELETE", `/svc-admin/oidc/initial-access-tokens/${revoked.id}`);
      assert.equal(gone.status, 204);
      assert.equal(await beds.admin.chainLength() - chain, 1);
      chain = await beds.admin.chainLength();
      const again = await beds.request("DELETE", `/svc-admin/oidc/initial-access-tokens/${revoked.id}`);
      assert.equal(again.status, 204);
      assert.equal(await beds.admin.chainLength() - chain, 0, "a repeat revoke writes no entry");
      assert.equal((await register(beds, revoked.token, { redirect_uris: [REDIRECT] })).status, 401);
      const unknown = await beds.request(
        "DELETE",
        `/svc-admin/oidc/initial-access-tokens/${crypto.randomUUID()}`,
      );
      assert.equal(unknown.status, 404);
    });

    await t.step("an impersonating administrator cannot mint or revoke", async () => {
      const { tokens } = await bed.auth.sessions.signIn({
        realmId,
        userId: beds.admin.users.global,
        mfa: "Password",
        impersonation: {
          actorId: beds.admin.users.plain,
          impersonationId: crypto.randomUUID(),
          expiresAt: new Date(bed.clock.now() + 600_000),
        },
      });
      const chain = await beds.admin.chainLength();
      const target = await mint(beds);
      const before = await beds.admin.chainLength();
      for (
        const [method, path] of [
          ["POST", "/svc-admin/oidc/initial-access-tokens"],
          ["DELETE", `/svc-admin/oidc/initial-access-tokens/${target.id}`],
        ]
      ) {
        const res = await beds.app.request(path, {
          method,
          headers: { Authorization: `Bearer ${tokens.accessToken}`, "Content-Type": "application/json" },
          body: method === "POST" ? "{}" : undefined,
        });
        assert.equal(res.status, 403, `${method} ${path}`);
        assert.equal((await res.json()).error.code, "impersonation_forbidden");
      }
      assert.equal(await beds.admin.chainLength(), before);
      assert.equal(before - chain, 1);
    });

    await t.step("the chain verifies", async () => {
      const report = await bed.storage.adminAudit.verify(realmId);
      assert.equal(report.valid, true);
    });
  } finally {
    await beds.close();
  }
});

Deno.test("registration metadata: every accepted redirect URI is https, or http on loopback for a native client", () => {
  const hosts = fc.constantFrom("rp.example.test", "127.0.0.1", "[::1]", "localhost", "10.0.0.1");
  fc.assert(fc.property(
    fc.constantFrom("https", "http", "ftp", "com.example.app"),
    hosts,
    fc.constantFrom("/cb", "/a/b?x=1", "/cb#f", "", "/%00"),
    fc.constantFrom<"web" | "native">("web", "native"),
    (scheme, host, path, applicationType) => {
      const uri = `${scheme}://${host}${path}`;
      try {
        const metadata = registeredMetadata({ redirect_uris: [uri], application_type: applicationType }, []);
        const url = new URL(metadata.redirect_uris[0]);
        assert.equal(url.hash, "");
        assert.equal(url.href, uri);
        assert.ok(
          url.protocol === "https:" ||
            (url.protocol === "http:" && applicationType === "native" &&
              ["127.0.0.1", "[::1]", "localhost"].includes(url.hostname)),
          uri,
        );
      } catch (error) {
        if (!(error instanceof RegistrationError)) throw error;
        assert.equal(error.error, "invalid_redirect_uri", uri);
      }
    },
  ));
});

Deno.test("oidc-provider: the client configuration endpoint (RFC 7592)", async (t) => {
  const beds = await pluginBed([plugin()], ON);
  const { bed, realmId } = beds.admin;
  try {
    const { token } = await mint(beds);
    const registered = await (await register(beds, token, {
      redirect_uris: [REDIRECT],
      client_name: "Managed App",
      contacts: ["dev@rp.example.test"],
    })).json();
    const rat: string = registered.registration_access_token;
    const uri = new URL(registered.registration_client_uri);
    const manage = (method: string, bearer: string | null, body?: unknown, path = uri.pathname) =>
      beds.app.request(path, {
        method,
        headers: {
          ...(bearer === null ? {} : { Authorization: `Bearer ${bearer}` }),
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const row = (await bed.storage.clients.getByClientId(realmId, registered.client_id))!;

    await t.step("the registration answers its access token and configuration URI", async () => {
      assert.match(rat, /^sor_[A-Za-z0-9_-]{43}$/);
      const discovery = await (await beds.app.request("/.well-known/openid-configuration")).json();
      assert.equal(
        registered.registration_client_uri,
        `${discovery.issuer}/oidc/register/${registered.client_id}`,
      );
      const stored = await bed.storage.pluginSql.query<Record<string, unknown>>(
        "SELECT * FROM oidc_provider_registrations WHERE client_row_id = $1",
        [row.id],
      );
      assert.ok(!JSON.stringify(stored).includes(rat), "only the hash of the token is stored");
    });

    await t.step("GET: the metadata as it stands, never the secret", async () => {
      const res = await manage("GET", rat);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("Cache-Control"), "no-store");
      const answer = await res.json();
      assert.equal(answer.client_id, registered.client_id);
      assert.equal(answer.client_secret, undefined);
      assert.deepEqual(answer.contacts, ["dev@rp.example.test"]);
      assert.equal(answer.client_name, "Managed App");
      assert.equal(answer.registration_access_token, rat);
      // An administrator's change shows.
      const patched = await beds.request("PATCH", `/svc-admin/oidc/clients/${row.id}`, {
        body: { clientName: "Renamed by admin" },
      });
      assert.equal(patched.status, 200);
      assert.equal((await (await manage("GET", rat)).json()).client_name, "Renamed by admin");
    });

    await t.step("a wrong, missing or misplaced token: 401 invalid_token", async () => {
      const other = await (await register(beds, token, { redirect_uris: [REDIRECT] })).json();
      for (
        const [bearer, path] of [
          [null, uri.pathname],
          [token, uri.pathname],
          [`${rat}x`, uri.pathname],
          [other.registration_access_token, uri.pathname],
          [rat, new URL(other.registration_client_uri).pathname],
          [rat, "/oidc/register/by-admin"],
        ] as const
      ) {
        const res = await manage("GET", bearer, undefined, path);
        assert.equal(res.status, 401, `${bearer} ${path}`);
        if (bearer === null) assert.equal(await res.text(), "");
        else assert.equal((await res.json()).error, "invalid_token");
      }
    });

    await t.step(
      "PUT: replaces the metadata, one entry and one event; an identical PUT neither",
      async () => {
        const body = {
          client_id: registered.client_id,
          redirect_uris: [REDIRECT, "https://rp.example.test/cb2"],
          client_name: "Managed App 2",
          contacts: ["ops@rp.example.test"],
          token_endpoint_auth_method: "client_secret_post",
          client_secret: registered.client_secret,
        };
        let chain = await beds.admin.chainLength();
        let events = bed.events.length;
        const res = await manage("PUT", rat, body);
        assert.equal(res.status, 200, await res.clone().text());
        const answer = await res.json();
        assert.deepEqual(answer.redirect_uris, body.redirect_uris);
        assert.deepEqual(answer.contacts, ["ops@rp.example.test"]);
        assert.equal(await beds.admin.chainLength() - chain, 1);
        const entry = await bed.database.db.selectFrom("admin_audit_entries").selectAll()
          .orderBy("seq", "desc").limit(1).executeTakeFirstOrThrow();
        assert.equal(entry.action, "oidc.client.registration_update");
        assert.equal(entry.actor_id, `oidc-provider:registration:${row.id}`);
        const updated = bed.events.slice(events).filter((event) => event.kind === "oidc.client_updated");
        assert.equal(updated.length, 1);
        const client = await bed.storage.clients.get(row.id);
        assert.deepEqual(client?.redirectUris, body.redirect_uris);
        assert.equal(client?.clientName, "Managed App 2");
        assert.equal(client?.tokenEndpointAuthMethod, "client_secret_post");
        assert.equal(client?.requireConsent, true, "consent stays the administrators'");

        chain = await beds.admin.chainLength();
        events = bed.events.length;
        const again = await manage("PUT", rat, body);
        assert.equal(again.status, 200);
        assert.equal(await beds.admin.chainLength() - chain, 0, "an identical PUT writes no entry");
        assert.equal(bed.events.length - events, 0, "an identical PUT emits nothing");
      },
    );

    await t.step("PUT refusals", async () => {
      const base = { client_id: registered.client_id, redirect_uris: [REDIRECT] };
      const cases: [unknown, string][] = [
        [{ redirect_uris: [REDIRECT] }, "invalid_client_metadata"],
        [{ ...base, client_id: "someone-else" }, "invalid_client_metadata"],
        [{ ...base, client_secret: "soc_wrong" }, "invalid_client_metadata"],
        [{ ...base, token_endpoint_auth_method: "none" }, "invalid_client_metadata"],
        [{ ...base, redirect_uris: ["http://rp.example.test/cb"] }, "invalid_redirect_uri"],
        [{ ...base, client_name: "a\u0000b" }, "invalid_client_metadata"],
      ];
      const chain = await beds.admin.chainLength();
      for (const [body, error] of cases) {
        const res = await manage("PUT", rat, body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal((await res.json()).error, error, JSON.stringify(body));
      }
      assert.equal(await beds.admin.chainLength(), chain);
    });

    await t.step("a suspended client cannot be managed; DELETE ends it", async () => {
      await beds.request("PATCH", `/svc-admin/oidc/clients/${row.id}`, { body: { suspended: true } });
      assert.equal((await manage("GET", rat)).status, 401);
      await beds.request("PATCH", `/svc-admin/oidc/clients/${row.id}`, { body: { suspended: false } });
      const chain = await beds.admin.chainLength();
      const events = bed.events.length;
      const res = await manage("DELETE", rat);
      assert.equal(res.status, 204);
      assert.equal(await beds.admin.chainLength() - chain, 1);
      assert.equal(
        bed.events.slice(events).filter((event) => event.kind === "oidc.client_deleted").length,
        1,
      );
      assert.equal(await bed.storage.clients.get(row.id), null);
      const left = await bed.storage.pluginSql.query(
        "SELECT 1 FROM oidc_provider_registrations WHERE client_row_id = $1",
        [row.id],
      );
      assert.equal(left.length, 0);
      assert.equal((await manage("GET", rat)).status, 401);
      assert.equal((await manage("DELETE", rat)).status, 401);
      assert.equal(await beds.admin.chainLength() - chain, 1);
    });

    await t.step(
      "an administrator's delete takes the registration (its contacts) with the client",
      async () => {
        const answer = await (await register(beds, token, {
          redirect_uris: [REDIRECT],
          contacts: ["ops@rp.example.test"],
        })).json();
        const client = (await bed.storage.clients.getByClientId(realmId, answer.client_id))!;
        const rows = () =>
          bed.storage.pluginSql.query("SELECT 1 FROM oidc_provider_registrations WHERE client_row_id = $1", [
            client.id,
          ]);
        assert.equal((await rows()).length, 1);
        assert.equal((await beds.request("DELETE", `/svc-admin/oidc/clients/${client.id}`)).status, 204);
        assert.equal((await rows()).length, 0);
      },
    );

    await t.step("the chain verifies", async () => {
      assert.equal((await bed.storage.adminAudit.verify(realmId)).valid, true);
    });
  } finally {
    await beds.close();
  }
});
