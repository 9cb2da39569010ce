/**
 * Encrypted assertions end to end on a plugin bed over real Postgres, samlify as the IdP
 * encrypting to the certificate it reads from svc's SP metadata:
 *
 * - an encryption key made through the admin API is published (`KeyDescriptor use="encryption"`)
 *   and an assertion encrypted to it signs in; its replay (30 concurrent posts) opens one session;
 * - rotation: a second key is published first (current), the first stays; an assertion encrypted
 *   to the first still signs in; once the first is retired (admin action), it is refused
 *   (`decryption: no SP key decrypts the assertion`) and the metadata names only the new key;
 * - `requireEncryptedAssertions` refuses a plain assertion, needs a key, and keeps the last key;
 * - 20 concurrent key creations stop at the limit of 3 with one audit entry per key made; 20
 *   concurrent retirements of one key: one succeeds, one entry; deleting the connection retires
 *   its keys;
 * - the private key is never in an answer, an audit entry or the metadata; the table holds it
 *   sealed only; an administrator of another realm sees nothing.
 */
import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { samlPlugin } from "../../../plugins/saml/mod.ts";
import { pluginBed } from "../../support/plugins.ts";
import { seeder } from "../../support/seed.ts";
import { testIdp } from "./idp.ts";

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(check(), what);
}

const ENCRYPTION_CERTS = /<md:KeyDescriptor use="encryption">[\s\S]*?<ds:X509Certificate>([^<]+)</g;

Deno.test("SAML encrypted assertions: sign-in, rotation, retirement, required encryption (Postgres)", async (t) => {
  const plugged = await pluginBed([samlPlugin()], {}, { postgres: true });
  try {
    const { bed } = plugged.admin;
    const app = plugged.app;
    const realmId = bed.realmId;
    const seed = seeder(bed.database.db);
    const samlAdmin = await seed.user(realmId);
    const role = await seed.role(realmId, "saml-admin", [{ pattern: "saml:global:*" }]);
    await seed.assign(realmId, role, { kind: "User", id: samlAdmin });
    // An administrator of another realm with the same permissions there.
    const otherRealm = await bed.storage.realms.create({ name: "other", displayName: "Other" });
    const stranger = await seed.user(otherRealm.id);
    const strangerRole = await seed.role(otherRealm.id, "saml-admin", [{ pattern: "saml:global:*" }]);
    await seed.assign(otherRealm.id, strangerRole, { kind: "User", id: stranger });
    await bed.snapshots.invalidateAll();
    const tokenOf = async (rid: string, userId: string) =>
      (await bed.auth.sessions.signIn({ realmId: rid, userId, orgId: null, mfa: "MultiFactor" })).tokens
        .accessToken;
    const token = await tokenOf(realmId, samlAdmin);
    const strangerToken = await tokenOf(otherRealm.id, stranger);
    const admin = (method: string, path: string, body?: unknown, bearer = token) =>
      app.request(path, {
        method,
        headers: {
          Authorization: `Bearer ${bearer}`,
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const chainLength = async () => (await bed.storage.adminAudit.list(realmId)).length;
    const org = await bed.storage.organizations.create({ realmId, name: "acme", displayName: "Acme" });
    await bed.storage.organizations.addDomain({
      orgId: org.id,
      kind: "EmailDomain",
      value: "acme.test",
      verified: true,
    });
    const idp = testIdp(undefined, undefined, undefined, () => bed.clock.now());
    const created = await admin("POST", "/svc-admin/saml/connections", {
      orgId: org.id,
      displayName: "Acme",
      idpMetadataXml: idp.metadata(),
      jitProvisioning: true,
      allowIdpInitiated: true,
    });
    assert.equal(created.status, 201, await created.clone().text());
    const connection = await created.json();
    assert.equal(connection.requireEncryptedAssertions, false);
    const sp = { entityId: connection.spEntityId, acsUrl: connection.acsUrl };
    const keysPath = `/svc-admin/saml/connections/${connection.id}/encryption-keys`;
    const answers: string[] = [];
    const metadataCerts = async () => {
      const xml = await (await app.request(new URL(connection.metadataUrl).pathname)).text();
      answers.push(xml);
      return [...xml.matchAll(ENCRYPTION_CERTS)].map((m) => m[1]);
    };
    const post = async (xml: string) => {
      const res = await app.request(new URL(connection.acsUrl).pathname, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ SAMLResponse: btoa(xml) }).toString(),
      });
      await res.body?.cancel();
      return res.status;
    };
    const lastRefusal = () => bed.events.filter((e) => e.kind === "saml.refused").at(-1)?.data.reason;
    const expectRefused = async (xml: string, reason: string) => {
      bed.events.length = 0;
      assert.equal(await post(xml), 403);
      await until(() => lastRefusal() === reason, `refused for ${reason}: ${lastRefusal()}`);
    };
    const respond = (nameId: string, cert: string | null) =>
      idp.respond(sp, { requestId: null, nameId, ...(cert === null ? {} : { encrypt: { cert } }) });

    let first = { id: "", der: "" };
    await t.step("a key is published and an assertion encrypted to it signs in; replay is one", async () => {
      assert.deepEqual(await metadataCerts(), [], "no key, no KeyDescriptor");
      const res = await admin("POST", keysPath, {});
      assert.equal(res.status, 201, await res.clone().text());
      assert.equal(res.headers.get("Cache-Control"), "no-store");
      const key = await res.json();
      answers.push(JSON.stringify(key));
      assert.equal(key.current, true);
      assert.match(key.certificate, /^-----BEGIN CERTIFICATE-----/);
      first = { id: key.id, der: key.certificate.replace(/-----[A-Z ]+-----|\s+/g, "") };
      assert.deepEqual(await metadataCerts(), [first.der]);
      const xml = await respond("enc@acme.test", first.der);
      assert.doesNotMatch(xml, /enc@acme\.test/);
      const statuses = await Promise.all(Array.from({ length: 30 }, () => post(xml)));
      assert.equal(statuses.filter((s) => s === 303).length, 1, JSON.stringify(statuses));
      assert.equal(statuses.filter((s) => s === 403).length, 29);
      const user = await bed.storage.users.findByEmail(realmId, "enc@acme.test");
      assert.ok(user);
      await until(
        () => bed.events.some((e) => e.kind === "saml.sign_in" && e.userId === user.id),
        "signed in",
      );
      await until(
        () => bed.events.filter((e) => e.kind === "saml.refused").length === 29,
        "29 refusals",
      );
      assert.deepEqual(
        new Set(bed.events.filter((e) => e.kind === "saml.refused").map((e) => e.data.reason)),
        new Set(["assertion replayed"]),
      );
    });

    await t.step("rotation: the new key first, the old one still decrypts until retired", async () => {
      const toOld = await respond("enc@acme.test", first.der);
      const res = await admin("POST", keysPath, {});
      assert.equal(res.status, 201);
      const second = await res.json();
      answers.push(JSON.stringify(second));
      const secondDer = second.certificate.replace(/-----[A-Z ]+-----|\s+/g, "");
      assert.deepEqual(await metadataCerts(), [secondDer, first.der], "current first, previous next");
      const listed = await (await admin("GET", keysPath)).json();
      answers.push(JSON.stringify(listed));
      assert.deepEqual(listed.items.map((k: { id: string; current: boolean }) => [k.id, k.current]), [
        [second.id, true],
        [first.id, false],
      ]);
      assert.equal(await post(toOld), 303, "encrypted to the previous key during the overlap");
      assert.equal(await post(await respond("enc@acme.test", secondDer)), 303);

      const stillOld = await respond("enc@acme.test", first.der);
      const before = await chainLength();
      const retired = await admin("DELETE", `${keysPath}/${first.id}`);
      assert.equal(retired.status, 204, await retired.clone().text());
      assert.equal(await chainLength(), before + 1);
      const entry = (await bed.storage.adminAudit.list(realmId)).at(-1)!;
      assert.equal(entry.action, "saml.encryption_key.retire");
      assert.deepEqual(await metadataCerts(), [secondDer]);
      await expectRefused(stillOld, "decryption: no SP key decrypts the assertion");
      assert.equal(await post(await respond("enc@acme.test", secondDer)), 303);
      // The retired key's subject key is destroyed: nothing of it is left.
      const { rows } = await sql<{ n: string | number }>`SELECT count(*) AS n FROM subject_keys
        WHERE subject_id = ${first.id}`.execute(bed.database.db);
      assert.equal(Number(rows[0].n), 0);
      assert.equal((await admin("DELETE", `${keysPath}/${first.id}`)).status, 404);
    });

    await t.step("requireEncryptedAssertions refuses a plain assertion and keeps the last key", async () => {
      const plain = await respond("enc@acme.test", null);
      const patched = await admin("PATCH", `/svc-admin/saml/connections/${connection.id}`, {
        requireEncryptedAssertions: true,
      });
      assert.equal(patched.status, 200, await patched.clone().text());
      assert.equal((await patched.json()).requireEncryptedAssertions, true);
      await expectRefused(plain, "assertion not encrypted");
      const [only] = (await (await admin("GET", keysPath)).json()).items;
      const last = await admin("DELETE", `${keysPath}/${only.id}`);
      assert.equal(last.status, 409);
      const der = only.certificate.replace(/-----[A-Z ]+-----|\s+/g, "");
      assert.equal(await post(await respond("enc@acme.test", der)), 303);
      // A connection without keys cannot require encryption.
      const bare = await admin("POST", "/svc-admin/saml/connections", {
        orgId: org.id,
        displayName: "Bare",
        idpMetadataXml: idp.metadata(),
      });
      const bareId = (await bare.json()).id;
      const refused = await admin("PATCH", `/svc-admin/saml/connections/${bareId}`, {
        requireEncryptedAssertions: true,
      });
      assert.equal(refused.status, 400);
      // Created requiring encryption: it starts with its key.
      const strict = await admin("POST", "/svc-admin/saml/connections", {
        orgId: org.id,
        displayName: "Strict",
        idpMetadataXml: idp.metadata(),
        requireEncryptedAssertions: true,
      });
      const strictId = (await strict.json()).id;
      const strictKeys = await (await admin("GET", `/svc-admin/saml/connections/${strictId}/encryption-keys`))
        .json();
      assert.equal(strictKeys.items.length, 1);
    });

    await t.step("concurrent creations stop at 3; concurrent retirements of one key: one", async () => {
      const fresh = await admin("POST", "/svc-admin/saml/connections", {
        orgId: org.id,
        displayName: "Race",
        idpMetadataXml: idp.metadata(),
      });
      const raceId = (await fresh.json()).id;
      const path = `/svc-admin/saml/connections/${raceId}/encryption-keys`;
      const before = await chainLength();
      const statuses = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const res = await admin("POST", path, {});
          await res.body?.cancel();
          return res.status;
        }),
      );
      assert.equal(statuses.filter((s) => s === 201).length, 3, JSON.stringify(statuses));
      assert.equal(statuses.filter((s) => s === 409).length, 17);
      assert.equal(await chainLength(), before + 3);
      const keys = (await (await admin("GET", path)).json()).items;
      assert.equal(keys.length, 3);
      const mark = await chainLength();
      const retirements = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const res = await admin("DELETE", `${path}/${keys[2].id}`);
          await res.body?.cancel();
          return res.status;
        }),
      );
      assert.equal(retirements.filter((s) => s === 204).length, 1, JSON.stringify(retirements));
      assert.equal(retirements.filter((s) => s === 404).length, 19);
      assert.equal(await chainLength(), mark + 1);
      // Deleting the connection retires its keys: rows and subject keys gone.
      const left = keys.slice(0, 2).map((k: { id: string }) => k.id);
      const remaining = async () =>
        Number(
          (await sql<{ n: string | number }>`SELECT
            (SELECT count(*) FROM saml_sp_keys WHERE connection_id = ${raceId})
            + (SELECT count(*) FROM subject_keys WHERE subject_id IN (${sql.join(left)})) AS n`
            .execute(bed.database.db)).rows[0].n,
        );
      assert.equal(await remaining(), 4);
      assert.equal((await admin("DELETE", `/svc-admin/saml/connections/${raceId}`)).status, 204);
      assert.equal(await remaining(), 0);
    });

    await t.step("another realm's administrator sees nothing", async () => {
      for (
        const [method, path] of [
          ["GET", keysPath],
          ["POST", keysPath],
          ["DELETE", `${keysPath}/${first.id}`],
        ]
      ) {
        const res = await admin(method, path, method === "POST" ? {} : undefined, strangerToken);
        assert.equal(res.status, 404, `${method} ${path}`);
      }
    });

    await t.step("the private key is never shown, and is stored sealed", async () => {
      for (const entry of await bed.storage.adminAudit.list(realmId)) answers.push(JSON.stringify(entry));
      for (const text of answers) assert.doesNotMatch(text, /PRIVATE KEY|private_key|privateKey|pkcs8/i);
      const { rows } = await sql<{ private_key: string }>`SELECT private_key FROM saml_sp_keys`.execute(
        bed.database.db,
      );
      assert.ok(rows.length > 0);
      for (const row of rows) {
        const bytes = Uint8Array.from(atob(row.private_key), (ch) => ch.charCodeAt(0));
        assert.equal(bytes[0], 1, "SubjectCrypto's sealed format");
        // A DER PKCS#8 key's base64 starts with MII; the sealed bytes are not one.
        assert.ok(!row.private_key.startsWith("MII"));
      }
    });
  } finally {
    await plugged.close();
  }
});
