/**
 * The Keycloak importer against a realm export in Keycloak's own layout: the newer
 * `secretData`/`credentialData` credentials and the deprecated `hashedSaltedValue` layout
 * (pbkdf2-sha256, 512-bit keys as Keycloak derives them), an argon2 credential (unsupported),
 * nested groups, realm roles, clients with a plaintext secret; the directory export too.
 */
import assert from "node:assert/strict";
import { runImport } from "../../../core/imports/engine.ts";
import { keycloakItems, keycloakPassword } from "../../../core/imports/keycloak.ts";
import { verifyPasswordHash } from "../../../core/passwords/registry.ts";
import { importBed } from "./support.ts";

const EXPORT = JSON.parse(
  await Deno.readTextFile(new URL("../../fixtures/imports/keycloak-realm.json", import.meta.url)),
);

Deno.test("keycloak: users, both credential layouts, roles, flattened groups, clients; re-run changes nothing", async () => {
  const bed = await importBed();
  try {
    const options = { targetRealmId: bed.realmId, dryRun: false };
    const report = await runImport(bed.deps, options, keycloakItems([EXPORT]));
    assert.deepEqual(report.users, { created: 3, updated: 0, skipped: 0, total: 3 });
    assert.deepEqual(report.credentials, { created: 2, updated: 0, skipped: 0, total: 2 });
    assert.deepEqual(report.roles, { created: 3, updated: 0, skipped: 0, total: 3 });
    assert.deepEqual(report.groups, { created: 3, updated: 0, skipped: 0, total: 3 });
    assert.deepEqual(report.roleAssignments, { created: 4, updated: 0, skipped: 0, total: 4 });
    assert.deepEqual(report.groupMemberships, { created: 2, updated: 0, skipped: 0, total: 2 });
    assert.deepEqual(report.clients, { created: 2, updated: 0, skipped: 0, total: 2 });
    const bySeverity = (s: string) =>
      report.issues.filter((i) => i.severity === s).map((i) => `${i.entity}:${i.key}`);
    assert.deepEqual(bySeverity("Error"), ["User:no-email"]);
    assert.deepEqual(bySeverity("Warning"), ["Credential:carol@acme.test"]);
    assert.ok(bySeverity("Info").includes("Group:/Staff/Ops"), "nested group flattened with an issue");

    const alice = (await bed.storage.users.findByEmail(bed.realmId, "alice@acme.test"))!;
    assert.equal(alice.displayName, "Alice Liddell");
    assert.deepEqual(alice.attributes, { department: "engineering", badges: ["a", "b"] });
    const aliceHash = (await bed.storage.passwordCredentials.get(alice.id))!;
    assert.equal(aliceHash.algorithm, "pbkdf2-sha256");
    assert.match(aliceHash.hash, /^\$pbkdf2-sha256\$i=27500,l=64\$/);
    assert.equal(await verifyPasswordHash("pbkdf2-sha256", aliceHash.hash, "kc password"), true);
    const roles = await bed.storage.roles.listAssignmentsForPrincipal("User", alice.id);
    const keys = await Promise.all(roles.map(async (a) => (await bed.storage.roles.get(a.roleId))!.key));
    assert.deepEqual(keys.sort(), ["imported:admin", "imported:offline_access"]);
    assert.deepEqual((await bed.storage.groups.listGroupsOfUser(alice.id)).map((g) => g.key), ["staff-ops"]);

    const bob = (await bed.storage.users.findByEmail(bed.realmId, "bob@acme.test"))!;
    assert.equal(bob.status, "Suspended", "disabled users are Suspended");
    const bobHash = (await bed.storage.passwordCredentials.get(bob.id))!;
    assert.equal(await verifyPasswordHash("pbkdf2-sha256", bobHash.hash, "legacy password"), true);
    const carol = (await bed.storage.users.findByEmail(bed.realmId, "carol@acme.test"))!;
    assert.equal(await bed.storage.passwordCredentials.get(carol.id), null);

    const orders = (await bed.storage.clients.getByClientId(bed.realmId, "orders"))!;
    assert.equal(orders.clientType, "confidential");
    assert.equal(orders.secretResetRequired, false, "rehashed, not rotated");
    assert.equal(
      await verifyPasswordHash(orders.secretAlgorithm!, orders.secretHash!, "orders-plain-secret"),
      true,
    );
    assert.deepEqual(orders.postLogoutRedirectUris, [
      "https://orders.acme.test/bye",
      "https://orders.acme.test/",
    ]);
    assert.deepEqual(orders.allowedScopes, ["profile", "email", "offline_access"]);
    assert.equal(
      await bed.storage.clients.getByClientId(bed.realmId, "account"),
      null,
      "built-in clients skipped",
    );
    assert.deepEqual(report.generatedClientSecrets, {});

    const before = await bed.rowCounts();
    const again = await runImport(bed.deps, options, keycloakItems([EXPORT]));
    for (
      const entity of [
        "users",
        "credentials",
        "roles",
        "groups",
        "roleAssignments",
        "groupMemberships",
        "clients",
      ]
    ) {
      const counts = again[entity as "users"];
      assert.equal(counts.created + counts.updated, 0, entity);
    }
    assert.deepEqual(await bed.rowCounts(), before);
  } finally {
    await bed.close();
  }
});

Deno.test("keycloak: a directory export (realm file plus users files) imports like the single file", async () => {
  const bed = await importBed();
  try {
    const { users, ...realmFile } = EXPORT;
    const usersFiles = [{ realm: "acme", users: users.slice(0, 2) }, {
      realm: "acme",
      users: users.slice(2),
    }];
    const report = await runImport(
      bed.deps,
      { targetRealmId: bed.realmId, dryRun: true },
      keycloakItems([realmFile, ...usersFiles]),
    );
    assert.deepEqual(report.users, { created: 3, updated: 0, skipped: 0, total: 3 });
    assert.deepEqual(report.roleAssignments.created, 4);
  } finally {
    await bed.close();
  }
});

Deno.test("keycloak: credential layouts that cannot be imported are warnings", () => {
  const warn = (entry: Record<string, unknown>) => "warning" in keycloakPassword(entry);
  assert.equal(warn({ type: "password", value: "plaintext" }), true);
  assert.equal(warn({ type: "password", secretData: "{", credentialData: "{}" }), true);
  assert.equal(
    warn({
      type: "password",
      secretData: JSON.stringify({ value: "aGFzaGVk", salt: "c2FsdA==" }),
      credentialData: JSON.stringify({ hashIterations: 1, algorithm: "pbkdf2-sha512" }),
    }),
    true,
  );
  // Keycloak's own deprecated-format test payload: a 6-byte "hash" is too short to be real.
  assert.equal(warn({ hashedSaltedValue: "aGFzaGVk", salt: "c2FsdA==", algorithm: "pbkdf2-sha256" }), true);
  assert.equal(
    "credential" in keycloakPassword({
      secretData: JSON.stringify({ value: "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW" }),
      credentialData: JSON.stringify({ algorithm: "bcrypt" }),
    }),
    true,
  );
});
