/**
 * SAML ACS verification per second beside a plain RS256 JWT verification (jose) in the same run:
 *
 *     deno run -A bench/saml_acs.ts
 *
 * - `jwt`: `jwtVerify` of an RS256 token with a 2048-bit key (the baseline);
 * - `validate`: the SAML plugin's response validation of one samlify-signed response (parse with
 *   the DTD refusal, shape checks, xml-crypto signature verification with exclusive c14n, the
 *   signed bytes parsed again, the profile's checks), the cost per assertion before storage;
 * - `encrypted`: the same for the same assertion encrypted by samlify to an SP key (RSA-OAEP,
 *   AES-256-GCM): decryption with the SP key (imported each time, as the ACS does after unsealing),
 *   then the same checks on the decrypted assertion;
 * - `acs`: the full `POST /saml/{id}/acs` through the app on PGlite, IdP-initiated, a fresh
 *   assertion each time (validation, the single-use mark, the linked user, a session, cookies).
 *
 * Prints operations per second (the JWT and validation rates: the best of three alternating
 * rounds, as the machine may be shared) and the ratios to the JWT baseline.
 *
 * @module
 */
import { exportSPKI, generateKeyPair, importSPKI, jwtVerify, SignJWT } from "jose";
import { samlPlugin } from "../plugins/saml/mod.ts";
import { pem } from "../plugins/saml/metadata.ts";
import { validateResponse } from "../plugins/saml/response.ts";
import { decryptionKey, generateSpKey } from "../plugins/saml/sp-keys.ts";
import { fixture, testIdp } from "../test/plugins/saml/idp.ts";
import { pluginBed } from "../test/support/plugins.ts";
import { seeder } from "../test/support/seed.ts";

async function rate(name: string, seconds: number, run: () => Promise<unknown> | unknown): Promise<number> {
  for (let i = 0; i < 20; i++) await run();
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) {
    await run();
    n++;
  }
  const perSecond = n / ((performance.now() - start) / 1000);
  console.log(`${name.padEnd(10)} ${perSecond.toFixed(0).padStart(8)} /s  (${n} in ${seconds} s)`);
  return perSecond;
}

// Baseline: RS256 JWT verification.
const { privateKey, publicKey } = await generateKeyPair("RS256", { modulusLength: 2048 });
const verifyKey = await importSPKI(await exportSPKI(publicKey), "RS256");
const jwt = await new SignJWT({ sub: "alice" }).setProtectedHeader({ alg: "RS256" }).setIssuer("https://idp")
  .setAudience("svc").setExpirationTime("1h").sign(privateKey);
const verifyJwt = () => jwtVerify(jwt, verifyKey, { issuer: "https://idp", audience: "svc" });

// The validator alone.
const sp = { entityId: "https://svc.test/saml/c1/metadata", acsUrl: "https://svc.test/saml/c1/acs" };
const idp = testIdp();
const xml = await idp.respond(sp, {
  requestId: null,
  nameId: "alice@acme.test",
  attributes: { email: "alice@acme.test", displayName: "Alice" },
});
const certificates = [pem(fixture("idp").cert.replace(/-----[A-Z ]+-----|\s+/g, ""))];
const validate = () =>
  validateResponse(xml, {
    spEntityId: sp.entityId,
    acsUrl: sp.acsUrl,
    idpEntityId: idp.entityId,
    certificates,
    requestId: null,
    now: Date.now(),
    skewMs: 60_000,
  });
const spKey = await generateSpKey("bench", Date.now(), new Uint8Array(16).fill(7));
const encryptedXml = await idp.respond(sp, {
  requestId: null,
  nameId: "alice@acme.test",
  attributes: { email: "alice@acme.test", displayName: "Alice" },
  encrypt: { cert: spKey.certificate },
});
const spKeys = [decryptionKey("bench", spKey.pkcs8)];
const validateEncrypted = async () => {
  const result = await validateResponse(encryptedXml, {
    spEntityId: sp.entityId,
    acsUrl: sp.acsUrl,
    idpEntityId: idp.entityId,
    certificates,
    requestId: null,
    now: Date.now(),
    skewMs: 60_000,
    decryptionKeys: () => Promise.resolve(spKeys),
  });
  if (!result.encrypted) throw new Error("not decrypted");
};
// The machine is shared: rounds alternate, and each kind keeps its best round.
let jwtRate = 0;
let validateRate = 0;
let encryptedRate = 0;
for (let round = 0; round < 3; round++) {
  jwtRate = Math.max(jwtRate, await rate("jwt", 1, verifyJwt));
  validateRate = Math.max(validateRate, await rate("validate", 1, validate));
  encryptedRate = Math.max(encryptedRate, await rate("encrypted", 1, validateEncrypted));
}

// The full ACS on PGlite.
const plugged = await pluginBed([samlPlugin()]);
const { bed } = plugged.admin;
const realmId = bed.realmId;
const seed = seeder(bed.database.db);
const admin = await seed.user(realmId);
const role = await seed.role(realmId, "saml-admin", [{ pattern: "saml:global:*" }]);
await seed.assign(realmId, role, { kind: "User", id: admin });
await bed.snapshots.invalidateAll();
const token =
  (await bed.auth.sessions.signIn({ realmId, userId: admin, orgId: null, mfa: "MultiFactor" })).tokens
    .accessToken;
const org = await bed.storage.organizations.create({ realmId, name: "acme", displayName: "Acme" });
await bed.storage.organizations.addDomain({
  orgId: org.id,
  kind: "EmailDomain",
  value: "acme.test",
  verified: true,
});
const clockIdp = testIdp(undefined, undefined, undefined, () => bed.clock.now());
const created = await (await plugged.app.request("/svc-admin/saml/connections", {
  method: "POST",
  headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
  body: JSON.stringify({
    orgId: org.id,
    displayName: "Acme",
    idpMetadataXml: clockIdp.metadata(),
    jitProvisioning: true,
    allowIdpInitiated: true,
  }),
})).json();
const known = { entityId: created.spEntityId, acsUrl: created.acsUrl };
const bodies: string[] = [];
const WARM = 20;
const N = 300;
for (let i = 0; i < WARM + N; i++) {
  const response = await clockIdp.respond(known, { requestId: null, nameId: "alice@acme.test" });
  bodies.push(new URLSearchParams({ SAMLResponse: btoa(response) }).toString());
}
const acsPath = new URL(created.acsUrl).pathname;
const post = async (body: string) => {
  const res = await plugged.app.request(acsPath, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body,
  });
  await res.body?.cancel();
  if (res.status !== 303) throw new Error(`acs answered ${res.status}`);
};
for (const body of bodies.slice(0, WARM)) await post(body);
const started = performance.now();
for (const body of bodies.slice(WARM)) await post(body);
const acsRate = N / ((performance.now() - started) / 1000);
console.log(`${"acs".padEnd(10)} ${acsRate.toFixed(0).padStart(8)} /s  (${N} fresh assertions)`);
await plugged.close();

console.log(
  `validate / jwt = ${(validateRate / jwtRate).toFixed(3)}  (jwt is ${
    (jwtRate / validateRate).toFixed(1)
  }x faster)`,
);
console.log(
  `encrypted / jwt = ${(encryptedRate / jwtRate).toFixed(3)}  (encrypted / validate = ${
    (encryptedRate / validateRate).toFixed(3)
  })`,
);
console.log(
  `acs / jwt      = ${(acsRate / jwtRate).toFixed(3)}  (jwt is ${(jwtRate / acsRate).toFixed(1)}x faster)`,
);
