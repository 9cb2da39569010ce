/**
 * Username-first passkey options do not tell who has passkeys (issue 19 item 7): the decoy of an
 * unknown address or of a user without passkeys has the shape of a real answer (number of
 * entries, id lengths, transports, every other option), its distribution follows the profiles,
 * and it is the same on two instances sharing a database and after a restart.
 */
import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { ManualClock } from "../../../core/clock.ts";
import { fromBase64Url } from "../../../core/encoding.ts";
import { DECOY_COUNT_WEIGHTS, DECOY_PROFILES, decoyCredentials } from "../../../core/passkeys/decoy.ts";
import { CeremonyKinds, PasskeyService } from "../../../core/passkeys/service.ts";
import { cryptoRandom, type RandomSource } from "../../../core/random.ts";
import { openDatabase, type SvcDatabase } from "../../../storage/open.ts";
import { createSqlStorage, type Storage } from "../../../storage/storage.ts";
import { TEST_DATABASE_URL } from "../../support/db.ts";
import { T0 } from "../../support/auth.ts";
import { recorded } from "./fixtures.ts";

type Options = Awaited<ReturnType<PasskeyService["startLogin"]>>["options"];

/** What an observer can compare: everything but the random challenge's value. */
function shape(options: Options) {
  const { challenge, allowCredentials, ...rest } = options;
  return {
    ...rest,
    challengeLength: challenge.length,
    allow: (allowCredentials ?? []).map((c) => ({
      keys: Object.keys(c).sort(),
      type: c.type,
      idBytes: fromBase64Url(c.id).length,
      idChars: c.id.length,
      transports: c.transports,
    })),
  };
}

const profileOf = (entry: { idBytes: number; transports?: readonly string[] }) =>
  DECOY_PROFILES.find((p) =>
    p.idBytes === entry.idBytes && JSON.stringify(p.transports) === JSON.stringify(entry.transports)
  );

function service(storage: Storage, clock: ManualClock, random: RandomSource) {
  return new PasskeyService({
    credentials: storage.passkeyCredentials,
    ceremonies: storage.passkeyCeremonies,
    users: storage.users,
    events: { emit: () => {} },
    clock,
    random,
    relyingParty: { id: recorded.rpId, name: "svc test", origins: [recorded.origin] },
    decoySecret: () => storage.serverSecrets.getOrCreate("passkey-decoy", () => random.bytes(32)),
  });
}

async function insertUser(database: SvcDatabase, realmId: string, id: string): Promise<string> {
  const email = `${id}@example.test`;
  await database.db.insertInto("users").values({
    id,
    realm_id: realmId,
    email,
    email_verified: true,
    display_name: null,
    status: "Active",
    attributes: "{}",
    is_break_glass: false,
    anonymized_at: null,
    created_at: new Date(T0),
    updated_at: new Date(T0),
  }).execute();
  return email;
}

Deno.test("passkey decoys: the shape of a real answer, on two instances and after a restart (postgres)", async (t) => {
  const schema = `svc_test_decoy_${Date.now().toString(36)}`;
  const open = async () => {
    const database = await openDatabase({
      kind: "postgres",
      url: TEST_DATABASE_URL,
      schema,
      maxConnections: 4,
    });
    await database.ensureSchema();
    return database;
  };
  const clock = new ManualClock(T0);
  const first = await open();
  const second = await open();
  let restarted: SvcDatabase | null = null;
  try {
    const storageA = createSqlStorage(first, { clock, random: cryptoRandom });
    const storageB = createSqlStorage(second, { clock, random: cryptoRandom });
    const realm = await storageA.realms.create({ name: "default", displayName: "Default", isDefault: true });
    const withPasskey = await insertUser(first, realm.id, recorded.userVerifying.userId);
    const withoutPasskey = await insertUser(first, realm.id, recorded.withoutUserVerification.userId);
    const a = service(storageA, clock, cryptoRandom);
    const b = service(storageB, clock, cryptoRandom);

    // The passkey Chromium's virtual authenticator made (recorded), registered through the service.
    const { registration } = recorded.userVerifying;
    const ceremony = await storageA.passkeyCeremonies.create({
      kind: CeremonyKinds.registration,
      challenge: registration.challenge,
      realmId: realm.id,
      userId: recorded.userVerifying.userId,
      data: {},
    });
    await a.finishRegistration(
      { id: recorded.userVerifying.userId, realmId: realm.id },
      ceremony.id,
      registration.response,
    );

    const real = shape((await a.startLogin({ realmId: realm.id, email: withPasskey })).options);
    const unknown = (await a.startLogin({ realmId: realm.id, email: "Nobody@Example.test" })).options;
    const noPasskey = (await a.startLogin({ realmId: realm.id, email: withoutPasskey })).options;

    await t.step("a real answer's entry is one of the decoy profiles", () => {
      assert.equal(real.allow.length, 1);
      assert.ok(profileOf(real.allow[0]), `no profile for ${JSON.stringify(real.allow[0])}`);
    });

    await t.step("decoys differ from a real answer only in what real answers differ in", () => {
      for (const decoy of [shape(unknown), shape(noPasskey)]) {
        const { allow, ...rest } = decoy;
        const { allow: realAllow, ...realRest } = real;
        assert.deepEqual(rest, realRest, "every option but the list is the same");
        assert.ok(allow.length >= 1 && allow.length <= 3);
        for (const entry of allow) {
          assert.deepEqual(entry.keys, realAllow[0].keys);
          assert.equal(entry.type, "public-key");
          assert.ok(profileOf(entry), `no profile for ${JSON.stringify(entry)}`);
        }
      }
    });

    await t.step("stable: the same address, another instance, and after a restart", async () => {
      const again = (await b.startLogin({ realmId: realm.id, email: "nobody@example.test" })).options;
      assert.deepEqual(again.allowCredentials, unknown.allowCredentials);
      const noPasskeyB = (await b.startLogin({ realmId: realm.id, email: withoutPasskey })).options;
      assert.deepEqual(noPasskeyB.allowCredentials, noPasskey.allowCredentials);
      await first.close();
      await second.close();
      restarted = await open();
      const c = service(createSqlStorage(restarted, { clock, random: cryptoRandom }), clock, cryptoRandom);
      const afterRestart = (await c.startLogin({ realmId: realm.id, email: "nobody@example.test" })).options;
      assert.deepEqual(afterRestart.allowCredentials, unknown.allowCredentials);
      const otherRealm = (await c.startLogin({ realmId: null, email: "nobody@example.test" })).options;
      assert.notDeepEqual(otherRealm.allowCredentials, unknown.allowCredentials, "keyed by realm too");
    });
  } finally {
    await first.close().catch(() => {});
    await second.close().catch(() => {});
    const cleanup = restarted ?? await open();
    await sql.raw(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).execute(cleanup.db);
    await cleanup.close();
  }
});

Deno.test("passkey decoys: counts and profiles follow their weights; ids are unpredictable", () => {
  const secret = cryptoRandom.bytes(32);
  const n = 4000;
  const counts = new Map<number, number>();
  const profiles = new Map<number, number>();
  const ids = new Set<string>();
  let entries = 0;
  for (let i = 0; i < n; i++) {
    const list = decoyCredentials(secret, "realm", `user${i}@example.test`);
    counts.set(list.length, (counts.get(list.length) ?? 0) + 1);
    for (const entry of list) {
      const bytes = fromBase64Url(entry.id);
      assert.match(entry.id, /^[A-Za-z0-9_-]+$/);
      const profile = profileOf({ idBytes: bytes.length, transports: entry.transports });
      assert.ok(profile);
      profiles.set(DECOY_PROFILES.indexOf(profile), (profiles.get(DECOY_PROFILES.indexOf(profile)) ?? 0) + 1);
      ids.add(entry.id);
      entries++;
    }
  }
  assert.equal(ids.size, entries, "no id repeats");
  const near = (observed: number, total: number, weight: number, sum: number) => {
    const expected = total * weight / sum;
    // Five standard deviations of a binomial count.
    const sd = Math.sqrt(total * (weight / sum) * (1 - weight / sum));
    assert.ok(Math.abs(observed - expected) < 5 * sd, `${observed} vs ${expected.toFixed(0)}`);
  };
  const countSum = DECOY_COUNT_WEIGHTS.reduce((s, c) => s + c.weight, 0);
  for (const { count, weight } of DECOY_COUNT_WEIGHTS) near(counts.get(count) ?? 0, n, weight, countSum);
  const profileSum = DECOY_PROFILES.reduce((s, p) => s + p.weight, 0);
  DECOY_PROFILES.forEach((p, i) => near(profiles.get(i) ?? 0, entries, p.weight, profileSum));

  // Same inputs, same decoy; another secret, another decoy; bytes look uniform.
  assert.deepEqual(decoyCredentials(secret, "realm", "a@b.c"), decoyCredentials(secret, "realm", "a@b.c"));
  assert.notDeepEqual(
    decoyCredentials(secret, "realm", "a@b.c"),
    decoyCredentials(cryptoRandom.bytes(32), "realm", "a@b.c"),
  );
  let ones = 0, bits = 0;
  for (const id of ids) {
    for (const byte of fromBase64Url(id)) {
      for (let k = 0; k < 8; k++) ones += (byte >> k) & 1;
      bits += 8;
    }
  }
  assert.ok(Math.abs(ones / bits - 0.5) < 0.01);
});
