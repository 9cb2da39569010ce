/** The client-config importer: either casing, fresh secrets each run (SecretResetRequired), broken entries. */
import assert from "node:assert/strict";
import { clientConfigItems } from "../../../core/imports/client-config.ts";
import { runImport } from "../../../core/imports/engine.ts";
import { verifyPasswordHash } from "../../../core/passwords/registry.ts";
import { importBed } from "./support.ts";

const CONFIG = JSON.stringify([
  {
    clientId: "web",
    clientType: "confidential",
    redirectUris: ["https://app.example.test/cb"],
    postLogoutRedirectUris: ["https://app.example.test/"],
    allowedScopes: ["openid", "profile"],
    requireConsent: true,
  },
  {
    ClientId: "spa",
    ClientType: "public",
    RedirectUris: ["https://spa.example.test/cb"],
    AllowedScopes: ["openid"],
  },
  { client_id: "legacy", require_client_secret: true, enabled: false },
  { clientType: "public" },
  "not an object",
  { clientId: "odd", clientType: "hybrid" },
]);

Deno.test("client config: both casings, generated secrets hashed, plaintext only in the report", async () => {
  const bed = await importBed();
  try {
    const report = await runImport(
      bed.deps,
      { targetRealmId: bed.realmId, dryRun: false },
      clientConfigItems(CONFIG),
    );
    assert.deepEqual(report.clients, { created: 3, updated: 0, skipped: 0, total: 3 });
    assert.deepEqual(report.issues.map((i) => [i.severity, i.key]), [["Error", "#3"], ["Error", "#4"], [
      "Error",
      "odd",
    ]]);
    assert.deepEqual(Object.keys(report.generatedClientSecrets).sort(), ["legacy", "web"]);
    const web = (await bed.storage.clients.getByClientId(bed.realmId, "web"))!;
    assert.equal(web.secretResetRequired, true);
    assert.equal(web.secretAlgorithm, "argon2id");
    assert.equal(web.requireConsent, true);
    assert.deepEqual(web.allowedScopes, ["openid", "profile"]);
    assert.notEqual(web.secretHash, report.generatedClientSecrets.web);
    assert.equal(
      await verifyPasswordHash("argon2id", web.secretHash!, report.generatedClientSecrets.web),
      true,
    );
    const spa = (await bed.storage.clients.getByClientId(bed.realmId, "spa"))!;
    assert.equal(spa.clientType, "public");
    assert.equal(spa.secretHash, null);
    const legacy = (await bed.storage.clients.getByClientId(bed.realmId, "legacy"))!;
    assert.equal(legacy.clientType, "confidential");
    assert.equal(legacy.suspended, true);

    // Each run regenerates confidential secrets (spec 9); the public client is unchanged.
    const again = await runImport(
      bed.deps,
      { targetRealmId: bed.realmId, dryRun: false },
      clientConfigItems(CONFIG),
    );
    assert.deepEqual(again.clients, { created: 0, updated: 2, skipped: 1, total: 3 });
    assert.notEqual(again.generatedClientSecrets.web, report.generatedClientSecrets.web);
    assert.equal((await bed.storage.clients.list(bed.realmId)).length, 3);

    // A dry run: same counts, no secret in the report (none exists), nothing written.
    const before = await bed.rowCounts();
    const dry = await runImport(
      bed.deps,
      { targetRealmId: bed.realmId, dryRun: true },
      clientConfigItems(CONFIG),
    );
    assert.deepEqual(dry.clients, again.clients);
    assert.deepEqual(dry.generatedClientSecrets, {});
    assert.deepEqual(await bed.rowCounts(), before);
    assert.equal(
      await verifyPasswordHash(
        "argon2id",
        (await bed.storage.clients.getByClientId(bed.realmId, "web"))!.secretHash!,
        again.generatedClientSecrets.web,
      ),
      true,
    );
  } finally {
    await bed.close();
  }
});

Deno.test("client config: a redirect URI that can never match is a Warning", () => {
  const items = clientConfigItems(JSON.stringify([{
    clientId: "web",
    redirectUris: [
      "https://app.example.test/cb",
      "https://APP.example.test/cb",
      "/relative",
      "https://a.test/#x",
    ],
    postLogoutRedirectUris: ["https://app.example.test"],
  }]));
  assert.equal(items[0].kind, "client");
  assert.deepEqual(
    items.slice(1).map((item) =>
      item.kind === "issue" ? [item.issue.severity, item.issue.message.split(" never")[0]] : null
    ),
    [
      ["Warning", 'The redirect URI "https://APP.example.test/cb"'],
      ["Warning", 'The redirect URI "/relative"'],
      ["Warning", 'The redirect URI "https://a.test/#x"'],
      ["Warning", 'The redirect URI "https://app.example.test"'],
    ],
  );
});

Deno.test("client config: a document that is not a JSON array is one Error issue", () => {
  assert.equal(clientConfigItems("{").length, 1);
  assert.equal(clientConfigItems(`{"clientId":"x"}`)[0].kind, "issue");
});
