/**
 * The SAML plugin on a plugin bed (svc's routes and the plugin's, as `svc start` mounts them),
 * with samlify as the organization's IdP (configured from svc's own SP metadata):
 *
 * - a connection is created from the IdP's metadata through the admin API and answers what the
 *   IdP is given; the SP metadata is served and samlify reads it;
 * - SP-initiated: `start` sends an HTTP-Redirect AuthnRequest whose id the response must answer,
 *   RelayState bound to the browser; just-in-time provisioning (a member of the organization,
 *   `saml.provisioned`, `saml.linked`, `saml.sign_in`), then the link reused;
 * - IdP-initiated where allowed, refused where not; a replayed assertion refused;
 * - an existing account is linked only while signed in (`link=1`), never by email alone; an email
 *   in a domain the organization did not verify is refused; a RelayState not bound to the browser
 *   is refused; every refusal shows the same page, the reason only in `saml.refused`;
 * - home-realm discovery sends a verified domain's email to the organization's connection.
 */
import { strict as assert } from "node:assert";
import { samlPlugin } from "../../../plugins/saml/mod.ts";
import { pluginBed } from "../../support/plugins.ts";
import { seeder } from "../../support/seed.ts";
import { fixture, type KnownSp, testIdp } from "./idp.ts";

async function inflateRaw(base64: string): Promise<string> {
  const bytes = Uint8Array.from(atob(base64), (ch) => ch.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return await new Response(stream).text();
}

/** Events are stored, then announced: waits until `check` holds (2 s at most). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(check(), what);
}

function setCookies(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const at = pair.indexOf("=");
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

Deno.test("SAML sign-in against samlify: SP- and IdP-initiated, JIT, linking, refusals", async (t) => {
  const plugin = samlPlugin();
  const plugged = await pluginBed([plugin]);
  try {
    const { bed } = plugged.admin;
    const app = plugged.app;
    const realmId = bed.realmId;
    const now = () => bed.clock.now();
    const seed = seeder(bed.database.db);
    const samlAdmin = await seed.user(realmId);
    const role = await seed.role(realmId, "saml-admin", [{ pattern: "saml:global:*" }]);
    await seed.assign(realmId, role, { kind: "User", id: samlAdmin });
    await bed.snapshots.invalidateAll();
    const admin = async (method: string, path: string, body: unknown) => {
      const { accessToken } =
        (await bed.auth.sessions.signIn({ realmId, userId: samlAdmin, orgId: null, mfa: "MultiFactor" }))
          .tokens;
      return app.request(path, {
        method,
        headers: { Authorization: `Bearer ${accessToken}`, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    };
    const acme = await bed.storage.organizations.create({ realmId, name: "acme", displayName: "Acme" });
    const domain = await bed.storage.organizations.addDomain({
      orgId: acme.id,
      kind: "EmailDomain",
      value: "acme.test",
      verified: true,
    });
    assert.ok(domain.verified);
    const idp = testIdp(undefined, undefined, undefined, now);

    const create = await admin("POST", "/svc-admin/saml/connections", {
      orgId: acme.id,
      displayName: "Acme Okta",
      idpMetadataXml: idp.metadata(),
      jitProvisioning: true,
      allowIdpInitiated: true,
      attributeMapping: { attributes: { department: "department" } },
      makeDefault: true,
    });
    assert.equal(create.status, 201, await create.clone().text());
    const connection = await create.json();
    assert.equal(connection.idpEntityId, idp.entityId);
    assert.equal(connection.idpSsoUrl, idp.ssoUrl);
    assert.equal(connection.spEntityId, connection.metadataUrl);
    assert.equal(connection.certificates.length, 1);
    const sp: KnownSp = { entityId: connection.spEntityId, acsUrl: connection.acsUrl };
    const acsPath = new URL(connection.acsUrl).pathname;
    const startPath = new URL(connection.startUrl).pathname;

    const post = (xml: string, relayState: string | null, cookie?: string) =>
      app.request(acsPath, {
        method: "POST",
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          ...(cookie === undefined ? {} : { Cookie: `svc_saml_relay=${cookie}` }),
        },
        body: new URLSearchParams({
          SAMLResponse: btoa(xml),
          ...(relayState === null ? {} : { RelayState: relayState }),
        }).toString(),
      });
    const begin = async (query = "", headers: Record<string, string> = {}) => {
      const res = await app.request(`${startPath}${query}`, { headers });
      assert.equal(res.status, 303, await res.clone().text());
      const target = new URL(res.headers.get("Location")!);
      assert.equal(`${target.origin}${target.pathname}`, idp.ssoUrl);
      const request = await inflateRaw(target.searchParams.get("SAMLRequest")!);
      const requestId = /ID="([^"]+)"/.exec(request)![1];
      assert.match(request, new RegExp(`AssertionConsumerServiceURL="${connection.acsUrl}"`));
      const relayState = target.searchParams.get("RelayState")!;
      assert.equal(setCookies(res).svc_saml_relay, relayState);
      return { requestId, relayState };
    };
    const refusedReasons = () =>
      bed.events.filter((e) => e.kind === "saml.refused").map((e) => e.data.reason);
    const expectRefused = async (res: Response, reason: string) => {
      assert.equal(res.status, 403);
      const page = await res.text();
      assert.match(page, /saml_sign_in_refused/);
      assert.ok(!page.includes(reason), "the reason is never shown");
      await until(
        () => refusedReasons().at(-1) === reason,
        `refused for ${reason}: ${refusedReasons().at(-1)}`,
      );
      bed.events.length = 0;
    };

    await t.step("the SP metadata is served and names the ACS URL", async () => {
      const res = await app.request(new URL(connection.metadataUrl).pathname);
      assert.equal(res.status, 200);
      assert.match(res.headers.get("Content-Type")!, /samlmetadata\+xml/);
      const xml = await res.text();
      assert.match(xml, new RegExp(`entityID="${connection.spEntityId}"`));
      assert.match(xml, new RegExp(`Location="${connection.acsUrl}"`));
    });

    let alice = "";
    await t.step("SP-initiated: just-in-time provisioning, then the link is reused", async () => {
      const { requestId, relayState } = await begin("?returnTo=%2Faccount%2Fsecurity");
      const xml = await idp.respond(sp, {
        requestId,
        nameId: "alice@acme.test",
        attributes: { email: "Alice@Acme.test", displayName: "Alice Anders", department: "R&D" },
      });
      const res = await post(xml, relayState, relayState);
      assert.equal(res.status, 303, await res.clone().text());
      assert.match(res.headers.get("Location")!, /\/account\/security$/);
      const cookies = setCookies(res);
      assert.ok(cookies.svc_at, "a session cookie");
      const user = await bed.storage.users.findByEmail(realmId, "alice@acme.test");
      assert.ok(user);
      alice = user.id;
      assert.equal(user.displayName, "Alice Anders");
      assert.equal(user.attributes.department, "R&D");
      assert.ok(await bed.storage.organizations.isMember(acme.id, user.id));
      await until(() => bed.events.some((e) => e.kind === "saml.sign_in"), "signed in");
      const kinds = bed.events.filter((e) => e.kind.startsWith("saml.") && e.userId === user.id).map((e) =>
        e.kind
      );
      assert.deepEqual(kinds, ["saml.provisioned", "saml.linked", "saml.sign_in"]);
      // The user sees them in their own security events, as federated sign-ins.
      const ledger = (await bed.storage.securityEvents.listByUser(user.id)).map((e) => e.kind);
      for (const kind of kinds) assert.ok(ledger.includes(kind), `${kind} in the user's ledger`);

      const again = await begin();
      const second = await post(
        await idp.respond(sp, { requestId: again.requestId, nameId: "alice@acme.test" }),
        again.relayState,
        again.relayState,
      );
      assert.equal(second.status, 303);
      await until(
        () => bed.events.filter((e) => e.kind === "saml.sign_in" && e.userId === alice).length === 2,
        "2 sign-ins",
      );
      assert.equal(bed.events.filter((e) => e.kind === "saml.provisioned").length, 1);
    });

    await t.step("the request is single-use and bound to the browser", async () => {
      const { requestId, relayState } = await begin();
      const xml = await idp.respond(sp, { requestId, nameId: "alice@acme.test" });
      await expectRefused(
        await post(xml, relayState, "x".repeat(43)),
        "relay state not bound to this browser",
      );
      await expectRefused(await post(xml, relayState), "relay state not bound to this browser");
      // The first refusal did not consume it: the right browser still can, once.
      assert.equal((await post(xml, relayState, relayState)).status, 303);
      const replay = await idp.respond(sp, { requestId, nameId: "alice@acme.test" });
      await expectRefused(await post(replay, relayState, relayState), "relay state unknown, expired or used");
    });

    await t.step("a response to another request is refused", async () => {
      const { relayState } = await begin();
      const xml = await idp.respond(sp, { requestId: "_someone_elses", nameId: "alice@acme.test" });
      await expectRefused(await post(xml, relayState, relayState), "in_response_to mismatch");
    });

    await t.step("IdP-initiated where allowed; a replayed assertion is refused", async () => {
      const xml = await idp.respond(sp, { requestId: null, nameId: "alice@acme.test" });
      const res = await post(xml, null);
      assert.equal(res.status, 303, await res.clone().text());
      await until(
        () => bed.events.filter((e) => e.kind === "saml.sign_in").at(-1)?.data.initiatedBy === "idp",
        "idp",
      );
      await expectRefused(await post(xml, null), "assertion replayed");
    });

    await t.step("an expired response is refused (the injected clock moved on)", async () => {
      const xml = await idp.respond(sp, { requestId: null, nameId: "alice@acme.test" });
      bed.clock.advance(10 * 60_000);
      await expectRefused(await post(xml, null), "subject confirmation expired");
    });

    await t.step("a stranger's signature is refused", async () => {
      const stranger = testIdp(idp.entityId, fixture("other"), idp.ssoUrl, now);
      const xml = await stranger.respond(sp, { requestId: null, nameId: "alice@acme.test" });
      await expectRefused(await post(xml, null), "signature invalid or not by the connection's certificates");
    });

    await t.step("an existing account is never linked by email alone; linked while signed in", async () => {
      const bob = await bed.storage.users.create({ realmId, email: "bob@acme.test", emailVerified: true });
      const xml = await idp.respond(sp, {
        requestId: null,
        nameId: "bob-idp-id",
        attributes: { email: "bob@acme.test" },
      });
      await expectRefused(await post(xml, null), "an account has this email; link it while signed in");
      const session = await bed.auth.sessions.signIn({
        realmId,
        userId: bob.id,
        orgId: null,
        mfa: "SingleFactor",
      });
      const { requestId, relayState } = await begin("?link=1", {
        Cookie: `svc_at=${session.tokens.accessToken}`,
      });
      const linked = await post(
        await idp.respond(sp, { requestId, nameId: "bob-idp-id", attributes: { email: "bob@acme.test" } }),
        relayState,
        relayState,
      );
      assert.equal(linked.status, 303, await linked.clone().text());
      await until(() => bed.events.some((e) => e.kind === "saml.linked"), "linked");
      const event = bed.events.filter((e) => e.kind === "saml.linked").at(-1)!;
      assert.equal(event.userId, bob.id);
      assert.equal(event.data.how, "signed_in");
      // From now on the NameID signs in as Bob, IdP-initiated too.
      const next = await post(await idp.respond(sp, { requestId: null, nameId: "bob-idp-id" }), null);
      assert.equal(next.status, 303);
      await until(() => bed.events.filter((e) => e.kind === "saml.sign_in").at(-1)?.userId === bob.id, "bob");
    });

    await t.step("an email in a domain the organization did not verify is not provisioned", async () => {
      const xml = await idp.respond(sp, { requestId: null, nameId: "carol@elsewhere.test" });
      await expectRefused(await post(xml, null), "email domain not verified by the organization");
    });

    await t.step("IdP-initiated is refused where the connection does not allow it", async () => {
      const patched = await admin("PATCH", `/svc-admin/saml/connections/${connection.id}`, {
        allowIdpInitiated: false,
      });
      assert.equal(patched.status, 200);
      const xml = await idp.respond(sp, { requestId: null, nameId: "alice@acme.test" });
      await expectRefused(await post(xml, null), "IdP-initiated sign-in not allowed");
    });

    await t.step("home-realm discovery sends a verified domain to the connection", async () => {
      const ask = (email: string) =>
        plugin.discoverSignIn!(plugged.contexts[0] as never, {
          email,
          domain: email.slice(email.indexOf("@") + 1),
          realmId,
          returnTo: "https://app.example.test/home",
        });
      assert.deepEqual(await ask("dave@acme.test"), {
        path: `/saml/${connection.id}/start?returnTo=https%3A%2F%2Fapp.example.test%2Fhome`,
      });
      assert.equal(await ask("dave@elsewhere.test"), null);
    });
  } finally {
    await plugged.close();
  }
});
