/**
 * The bootstrap administrator: idempotent across restarts (a later password change survives)
 * and across instances booting at once (on Postgres: one user, role, grant, assignment and
 * password, whoever wins each race).
 */
import { strict as assert } from "node:assert";
import {
  BOOTSTRAP_ACTOR_ID,
  bootstrapAdmin,
  SVC_ADMIN_PATTERN,
  SVC_ADMIN_ROLE_KEY,
} from "../../../core/accounts/bootstrap.ts";
import { ManualClock } from "../../../core/clock.ts";
import { ConfigError, loadConfig } from "../../../core/config/load.ts";
import { ValidationError } from "../../../core/errors.ts";
import { InThreadPasswordHasher } from "../../../core/passwords/hasher.ts";
import { PasswordService } from "../../../core/passwords/service.ts";
import { cryptoRandom } from "../../../core/random.ts";
import { createSqlStorage, type Storage } from "../../../storage/storage.ts";
import { freshEmbedded, freshPostgres } from "../../support/db.ts";

const passwords = () =>
  new PasswordService({
    hasher: new InThreadPasswordHasher(),
    params: { memoryKiB: 8192, iterations: 1, parallelism: 1 },
  });

/** The realm's audit actions; every entry is the bootstrap's (actor kind System) and the chain verifies. */
async function bootstrapEntries(storage: Storage, realmId: string): Promise<string[]> {
  const entries = await storage.adminAudit.list(realmId, { limit: 1000 });
  for (const e of entries) {
    assert.deepEqual([e.actorKind, e.actorId, e.onBehalfOf], ["System", BOOTSTRAP_ACTOR_ID, null]);
    assert.ok(!JSON.stringify(e.after).includes('password"'), "no secret in the entry");
  }
  assert.equal((await storage.adminAudit.verify(realmId)).valid, true);
  return entries.map((e) => e.action);
}

Deno.test("bootstrap admin: restarts keep one admin and never overwrite a changed password", async () => {
  const database = await freshEmbedded();
  try {
    const storage = createSqlStorage(database, { clock: new ManualClock(0), random: cryptoRandom });
    const service = passwords();
    const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
    const input = { realmId: realm.id, email: " Root@Example.test ", password: "first password" };
    const first = await bootstrapAdmin({ storage, passwords: service }, input);
    assert.equal(
      first.userCreated && first.roleCreated && first.assignmentCreated && first.passwordSet,
      true,
    );
    assert.equal(first.grantAdded, false, "the role is created with its grant");
    const created = ["role.create", "user.create", "role.assign", "user.password.set"];
    assert.deepEqual(await bootstrapEntries(storage, realm.id), created);

    const changed = await service.hash("changed later");
    await storage.passwordCredentials.replace(first.userId, changed);
    const second = await bootstrapAdmin({ storage, passwords: service }, {
      ...input,
      password: "other password",
    });
    assert.equal(second.userId, first.userId);
    assert.equal(second.passwordSet || second.userCreated || second.assignmentCreated, false);
    assert.equal((await storage.passwordCredentials.get(first.userId))?.hash, changed.hash);
    assert.deepEqual(await bootstrapEntries(storage, realm.id), created, "a restart that changes nothing");

    // A removed grant comes back.
    const role = await storage.roles.getByKey(realm.id, SVC_ADMIN_ROLE_KEY, null);
    const [grant] = await storage.roles.listGrants(role!.id);
    await storage.roles.removeGrant(role!.id, grant.id);
    assert.equal((await bootstrapAdmin({ storage, passwords: service }, input)).grantAdded, true);
    assert.deepEqual((await storage.roles.listGrants(role!.id)).map((g) => g.pattern), [SVC_ADMIN_PATTERN]);
    assert.deepEqual(await bootstrapEntries(storage, realm.id), [...created, "role.grant.add"]);
    await service.close();
  } finally {
    await database.close();
  }
});

Deno.test("bootstrap admin: instances booting at once on Postgres end with one of everything", async () => {
  const database = await freshPostgres({ maxConnections: 12 });
  try {
    const storage = createSqlStorage(database, { clock: new ManualClock(0), random: cryptoRandom });
    const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
    const instances = Array.from({ length: 6 }, () => passwords());
    const reports = await Promise.all(
      instances.map((service) =>
        bootstrapAdmin(
          {
            storage: createSqlStorage(database, { clock: new ManualClock(0), random: cryptoRandom }),
            passwords: service,
          },
          { realmId: realm.id, email: "root@example.test", password: "bootstrap secret" },
        )
      ),
    );
    const userId = reports[0].userId;
    assert.ok(reports.every((r) => r.userId === userId && r.roleId === reports[0].roleId));
    assert.equal(reports.filter((r) => r.userCreated).length, 1);
    assert.equal(reports.filter((r) => r.roleCreated).length, 1);
    assert.equal(reports.filter((r) => r.assignmentCreated).length, 1);
    assert.equal((await storage.users.listByRealm(realm.id)).length, 1);
    assert.equal((await storage.roles.list(realm.id)).length, 1);
    assert.equal((await storage.roles.listGrants(reports[0].roleId)).length, 1);
    assert.equal((await storage.roles.listAssignmentsOfRole(reports[0].roleId)).length, 1);
    const credentials = await storage.passwordCredentials.list(userId);
    assert.equal(credentials.length, 1);
    assert.equal((await instances[0].verify(credentials[0], "bootstrap secret")).valid, true);
    // One entry per change, whoever made it; the instances that lost a race appended nothing.
    assert.deepEqual(
      (await bootstrapEntries(storage, realm.id)).sort(),
      ["role.assign", "role.create", "user.create", "user.password.set"],
    );
    for (const service of instances) await service.close();
  } finally {
    await database.close();
  }
});

Deno.test("bootstrap admin: a password outside the password policy is refused at start, before any change", async () => {
  // The configuration refuses it first: a clear error naming the setting.
  assert.throws(
    () =>
      loadConfig({
        env: { SVC_BOOTSTRAP_ADMIN_EMAIL: "root@example.test", SVC_BOOTSTRAP_ADMIN_PASSWORD: "short" },
      }),
    (error: unknown) =>
      error instanceof ConfigError && /SVC_BOOTSTRAP_ADMIN_PASSWORD/.test(error.message) &&
      /password policy/.test(error.message) && !error.message.includes("short"),
  );
  const { config } = loadConfig({
    env: { SVC_BOOTSTRAP_ADMIN_EMAIL: "root@example.test", SVC_BOOTSTRAP_ADMIN_PASSWORD: "long enough" },
  });
  assert.equal(config.bootstrap.adminPassword, "long enough");
  // A caller that skips the configuration is refused too, and nothing is written.
  const database = await freshEmbedded();
  try {
    const storage = createSqlStorage(database, { clock: new ManualClock(0), random: cryptoRandom });
    const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
    await assert.rejects(
      bootstrapAdmin({ storage, passwords: passwords() }, {
        realmId: realm.id,
        email: "root@example.test",
        password: "short",
      }),
      (error: unknown) => error instanceof ValidationError && error.details?.field === "password",
    );
    assert.equal(await storage.users.findByEmail(realm.id, "root@example.test"), null);
    assert.deepEqual(await bootstrapEntries(storage, realm.id), []);
  } finally {
    await database.close();
  }
});
