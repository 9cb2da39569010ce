/**
 * The import engine holds imported password hashes to the cost ceilings, on both of its paths
 * (new users without roles, written in bulk; users with roles or already present, item by
 * item): a hash beyond a ceiling is an `Error` issue on the `Credential`, the user is still
 * imported (without it), an existing password is left alone, and the other items go on.
 */
import assert from "node:assert/strict";
import { runImport } from "../../../core/imports/engine.ts";
import type { ImportedUser, ImportItem } from "../../../core/imports/model.ts";
import { importBed } from "./support.ts";

const BODY = "CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
const user = (email: string, cost: number, roleKeys: string[] = []): ImportItem => ({
  kind: "user",
  user: {
    email,
    emailVerified: true,
    suspended: false,
    credential: { algorithm: "bcrypt", hash: `$2b$${String(cost).padStart(2, "0")}$${BODY}` },
    roleKeys,
    groupKeys: [],
    attributes: {},
  } satisfies ImportedUser,
});

Deno.test("imports: hashes beyond the cost ceilings are Error issues on both engine paths; the run goes on", async () => {
  const bed = await importBed();
  try {
    const ceilings = { bcryptCost: 10, pbkdf2Iterations: 1000, argon2MemoryKiB: 8192, argon2Iterations: 1 };
    const deps = { ...bed.deps, hashCeilings: ceilings };
    const pbkdf2 = (email: string, iterations: number): ImportItem => ({
      kind: "user",
      user: {
        email,
        emailVerified: true,
        suspended: false,
        credential: {
          algorithm: "pbkdf2-sha256",
          hash: `$pbkdf2-sha256$i=${iterations},l=32$c2FsdHNhbHRzYWx0c2FsdA$${"A".repeat(43)}`,
        },
        roleKeys: [],
        groupKeys: [],
        attributes: {},
      },
    });
    const report = await runImport(deps, { targetRealmId: bed.realmId, dryRun: false }, [
      user("bulk-ok@example.test", 10),
      user("bulk-costly@example.test", 31),
      user("item-ok@example.test", 10, ["staff"]),
      user("item-costly@example.test", 11, ["staff"]),
      pbkdf2("pbkdf2-ok@example.test", 1000),
      pbkdf2("pbkdf2-costly@example.test", 1001),
    ]);
    assert.deepEqual(report.users, { created: 6, updated: 0, skipped: 0, total: 6 });
    assert.deepEqual(report.credentials, { created: 3, updated: 0, skipped: 3, total: 6 });
    const errors = report.issues.filter((i) => i.severity === "Error");
    assert.deepEqual(errors.map((i) => [i.entity, i.key]).sort(), [
      ["Credential", "bulk-costly@example.test"],
      ["Credential", "item-costly@example.test"],
      ["Credential", "pbkdf2-costly@example.test"],
    ]);
    for (
      const email of ["bulk-costly@example.test", "item-costly@example.test", "pbkdf2-costly@example.test"]
    ) {
      const found = (await bed.storage.users.findByEmail(bed.realmId, email))!;
      assert.ok(found, email);
      assert.equal(await bed.storage.passwordCredentials.get(found.id), null, email);
    }
    for (const email of ["bulk-ok@example.test", "item-ok@example.test", "pbkdf2-ok@example.test"]) {
      const found = (await bed.storage.users.findByEmail(bed.realmId, email))!;
      assert.notEqual(await bed.storage.passwordCredentials.get(found.id), null, email);
    }

    // An existing user's password stays when a re-import brings a costlier hash.
    const again = await runImport(deps, { targetRealmId: bed.realmId, dryRun: false }, [
      user("bulk-ok@example.test", 12),
    ]);
    assert.deepEqual(again.credentials, { created: 0, updated: 0, skipped: 1, total: 1 });
    const ok = (await bed.storage.users.findByEmail(bed.realmId, "bulk-ok@example.test"))!;
    assert.match((await bed.storage.passwordCredentials.get(ok.id))!.hash, /^\$2b\$10\$/);

    // Without explicit ceilings the engine uses the defaults (bcrypt 14).
    const byDefault = await runImport(
      { ...bed.deps, hashCeilings: undefined },
      { targetRealmId: bed.realmId, dryRun: true },
      [user("d14@example.test", 14), user("d15@example.test", 15)],
    );
    assert.deepEqual(byDefault.credentials, { created: 1, updated: 0, skipped: 1, total: 2 });
  } finally {
    await bed.close();
  }
});
