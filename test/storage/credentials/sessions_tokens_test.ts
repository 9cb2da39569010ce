import assert from "node:assert/strict";
import fc from "fast-check";
import { sha256Hex } from "../../../core/digest.ts";
import { ConflictError } from "../../../core/errors.ts";
import { isApiKeyActive } from "../../../core/storage/api-keys.ts";
import { acceptedSecretHashes } from "../../../core/storage/service-accounts.ts";
import { isSessionActive } from "../../../core/storage/sessions.ts";
import { drivers } from "../../support/db.ts";
import { seeder } from "../../support/seed.ts";
import { clockAt, makeRealm, makeUser, storesFor, uuid } from "./fixtures.ts";

const MIN = 60_000;
const DAY = 86_400_000;

for (const driver of drivers) {
  Deno.test(`${driver.name}: sessions, tokens, machine credentials, clients`, async (t) => {
    const database = await driver.open();
    const db = database.db;
    try {
      const realm = await makeRealm(db);

      await t.step("sessions: touch extends the idle expiry, capped at the absolute one", async () => {
        const clock = clockAt();
        const { sessions } = storesFor(db, clock);
        const user = await makeUser(db, realm);
        const s = await sessions.create({
          realmId: realm,
          userId: user,
          mfa: "Password",
          ipAddress: "192.0.2.1",
          idleTimeoutMs: 30 * MIN,
          absoluteTimeoutMs: 60 * MIN,
        });
        assert.equal(s.idleExpiresAt.getTime(), clock.now() + 30 * MIN);
        assert.equal(isSessionActive(s, clock.now()), true);
        clock.advance(20 * MIN);
        const touched = await sessions.touch(s.id, 30 * MIN);
        assert.equal(touched?.lastSeenAt.getTime(), clock.now());
        assert.equal(touched?.idleExpiresAt.getTime(), clock.now() + 30 * MIN);
        clock.advance(20 * MIN);
        const capped = await sessions.touch(s.id, 30 * MIN);
        assert.equal(capped?.idleExpiresAt.getTime(), s.absoluteExpiresAt.getTime());
        clock.advance(20 * MIN);
        assert.equal(await sessions.touch(s.id, 30 * MIN), null, "absolutely expired");
        assert.equal(await sessions.getActive(s.id), null);
        assert.notEqual(await sessions.get(s.id), null);
      });

      await t.step("sessions: an idle-expired session cannot be revived", async () => {
        const clock = clockAt();
        const { sessions } = storesFor(db, clock);
        const user = await makeUser(db, realm);
        const s = await sessions.create({
          realmId: realm,
          userId: user,
          mfa: "Password",
          idleTimeoutMs: 10 * MIN,
          absoluteTimeoutMs: DAY,
        });
        clock.advance(10 * MIN);
        assert.equal(await sessions.touch(s.id, 10 * MIN), null);
        assert.equal(await sessions.setMfa(s.id, "PhishingResistant"), false);
      });

      await t.step("sessions: revoke is scoped; revokeAll and listActive", async () => {
        const clock = clockAt();
        const { sessions } = storesFor(db, clock);
        const user = await makeUser(db, realm);
        const other = await makeUser(db, realm);
        const make = (userId: string) =>
          sessions.create({
            realmId: realm,
            userId,
            mfa: "Password",
            idleTimeoutMs: DAY,
            absoluteTimeoutMs: DAY,
          });
        const a = await make(user);
        clock.advance(1000);
        const b = await make(user);
        clock.advance(1000);
        const c = await make(user);
        const foreign = await make(other);
        assert.deepEqual((await sessions.listActiveForUser(user)).map((s) => s.id), [c.id, b.id, a.id]);
        assert.equal(await sessions.revoke(foreign.id, { userId: user }), false, "another user's session");
        assert.equal(await sessions.revoke(uuid(), { userId: user }), false, "unknown");
        assert.equal(await sessions.revoke("not-a-uuid", { userId: user }), false);
        assert.equal(await sessions.revoke(a.id, { userId: user }), true);
        const revokedAt = (await sessions.get(a.id))?.revokedAt?.getTime();
        clock.advance(1000);
        assert.equal(await sessions.revoke(a.id), false);
        assert.equal((await sessions.get(a.id))?.revokedAt?.getTime(), revokedAt);
        assert.equal(await sessions.setMfa(c.id, "PhishingResistant"), true);
        assert.equal((await sessions.get(c.id))?.mfa, "PhishingResistant");
        assert.deepEqual(await sessions.revokeAllForUser(user, { exceptId: c.id }), [b.id]);
        assert.deepEqual((await sessions.listActiveForUser(user)).map((s) => s.id), [c.id]);
        clock.advance(1000);
        assert.deepEqual(await sessions.revokeAllForUser(user), [c.id]);
        assert.deepEqual(await sessions.listActiveForUser(user), []);
        assert.equal((await sessions.listActiveForUser(other)).length, 1);
        // The preload of a starting instance: ended sessions, most recent first, bounded.
        const ended = await sessions.listEndedSince(new Date(clock.now() - 1500), 10);
        assert.deepEqual(ended.map((e) => e.id), [c.id, b.id]);
        assert.equal(ended[0].endedAt, clock.now());
        assert.deepEqual((await sessions.listEndedSince(new Date(0), 1)).map((e) => e.id), [c.id]);
      });

      await t.step("sessions: listEndedInOrder pages every end of a window once, in order", async () => {
        // Far from the other steps' ends: this window holds only the sessions made here.
        const start = Date.UTC(2031, 0, 1);
        const clock = clockAt(start);
        const { sessions } = storesFor(db, clock);
        // Ends at 4 instants, several at the same one (revokeAllForUser), some never.
        const expected: { id: string; endedAt: number }[] = [];
        for (const group of [3, 1, 4, 2]) {
          const user = await makeUser(db, realm);
          for (let i = 0; i < group + 1; i++) {
            await sessions.create({
              realmId: realm,
              userId: user,
              mfa: "Password",
              idleTimeoutMs: DAY,
              absoluteTimeoutMs: DAY,
            });
          }
          const kept = await sessions.create({
            realmId: realm,
            userId: user,
            mfa: "Password",
            idleTimeoutMs: DAY,
            absoluteTimeoutMs: DAY,
          });
          clock.advance(1000);
          const ended = await sessions.revokeAllForUser(user, { exceptId: kept.id });
          expected.push(...ended.map((id) => ({ id, endedAt: clock.now() })));
        }
        const inOrder = [...expected].sort((a, b) => a.endedAt - b.endedAt || (a.id < b.id ? -1 : 1));
        const until = new Date(clock.now());
        await fc.assert(
          fc.asyncProperty(fc.integer({ min: 1, max: inOrder.length + 1 }), async (pageSize) => {
            const seen: { id: string; endedAt: number }[] = [];
            let after: { endedAt: number; id?: string } = { endedAt: start };
            for (;;) {
              const page = await sessions.listEndedInOrder(after, until, pageSize);
              seen.push(...page);
              if (page.length < pageSize) break;
              after = page.at(-1)!;
            }
            assert.deepEqual(seen, inOrder);
          }),
          { numRuns: 15 },
        );
        // `until` bounds the window; without an id, ends at `after.endedAt` itself are in.
        const last = inOrder.at(-1)!.endedAt;
        const before = await sessions.listEndedInOrder({ endedAt: start }, new Date(last - 1), 100);
        assert.deepEqual(before, inOrder.filter((e) => e.endedAt < last));
        const atLast = await sessions.listEndedInOrder({ endedAt: last }, until, 100);
        assert.deepEqual(atLast, inOrder.filter((e) => e.endedAt === last));
        assert.deepEqual(await sessions.listEndedInOrder({ endedAt: start }, until, 0), []);
      });

      const newFamily = async (clock: ReturnType<typeof clockAt>, userId: string) => {
        const { refreshTokens } = storesFor(db, clock);
        const hash = sha256Hex(`srt_${uuid()}`);
        return await refreshTokens.insert({
          tokenHash: hash,
          familyId: uuid(),
          sessionId: uuid(),
          userId,
          realmId: realm,
          audience: "app",
          expiresAt: new Date(clock.now() + 30 * DAY),
        });
      };

      await t.step("refresh tokens: rotation chains the family; replay is reported as reuse", async () => {
        const clock = clockAt();
        const { refreshTokens } = storesFor(db, clock);
        const user = await makeUser(db, realm);
        const first = await newFamily(clock, user);
        clock.advance(MIN);
        const h2 = sha256Hex(`srt_${uuid()}`);
        const r1 = await refreshTokens.rotate(first.tokenHash, {
          tokenHash: h2,
          expiresAt: new Date(clock.now() + DAY),
        });
        assert.equal(r1.outcome, "rotated");
        if (r1.outcome !== "rotated") throw new Error("unreachable");
        assert.equal(r1.token.familyId, first.familyId);
        assert.equal(r1.token.parentHash, first.tokenHash);
        assert.equal(r1.token.audience, "app");
        assert.equal(r1.previous.usedAt?.getTime(), clock.now());

        const replay = await refreshTokens.rotate(first.tokenHash, {
          tokenHash: sha256Hex(`srt_${uuid()}`),
          expiresAt: new Date(clock.now() + DAY),
        });
        assert.equal(replay.outcome, "reused");
        if (replay.outcome !== "reused") throw new Error("unreachable");
        assert.equal(replay.previous.familyId, first.familyId);
        // The caller revokes the family: the live successor dies too.
        assert.equal(await refreshTokens.revokeFamily(replay.previous.familyId), 2);
        const afterRevoke = await refreshTokens.rotate(h2, {
          tokenHash: sha256Hex(`srt_${uuid()}`),
          expiresAt: new Date(clock.now() + DAY),
        });
        assert.equal(afterRevoke.outcome, "revoked");
        assert.equal(
          (await refreshTokens.rotate(sha256Hex("never-issued"), { tokenHash: "x", expiresAt: new Date() }))
            .outcome,
          "unknown",
        );
      });

      await t.step("refresh tokens: expiry, duplicate hash, revokeAllForUser", async () => {
        const clock = clockAt();
        const { refreshTokens } = storesFor(db, clock);
        const user = await makeUser(db, realm);
        const token = await newFamily(clock, user);
        await assert.rejects(
          refreshTokens.insert({
            tokenHash: token.tokenHash,
            familyId: uuid(),
            sessionId: uuid(),
            userId: user,
            realmId: realm,
            expiresAt: new Date(clock.now() + DAY),
          }),
          ConflictError,
        );
        const other = await newFamily(clock, user);
        clock.advance(30 * DAY);
        const expired = await refreshTokens.rotate(token.tokenHash, {
          tokenHash: "y",
          expiresAt: new Date(),
        });
        assert.equal(expired.outcome, "expired");
        assert.equal(await refreshTokens.get("y"), null, "no successor stored");
        assert.equal(await refreshTokens.revokeAllForUser(user), 2);
        assert.notEqual((await refreshTokens.get(other.tokenHash))?.revokedAt, null);
        assert.equal(await refreshTokens.revokeAllForUser(user), 0);
        assert.ok(await refreshTokens.pruneExpired(new Date(clock.now() + 1)) >= 2);
      });

      await t.step("refresh tokens: concurrent rotations have one winner", async () => {
        const clock = clockAt();
        const { refreshTokens } = storesFor(db, clock);
        const user = await makeUser(db, realm);
        const token = await newFamily(clock, user);
        const results = await Promise.all(
          Array.from({ length: 5 }, (_, i) =>
            refreshTokens.rotate(token.tokenHash, {
              tokenHash: sha256Hex(`next-${token.tokenHash}-${i}`),
              expiresAt: new Date(clock.now() + DAY),
            })),
        );
        assert.equal(results.filter((r) => r.outcome === "rotated").length, 1);
        assert.equal(results.filter((r) => r.outcome === "reused").length, 4);
      });

      await t.step(
        "refresh grants: one statement rotates, touches the session, reads user and membership",
        async () => {
          const clock = clockAt();
          const { refreshTokens, sessions } = storesFor(db, clock);
          const user = await makeUser(db, realm);
          const org = await seeder(db).org(realm, [user]);
          const session = await sessions.create({
            realmId: realm,
            userId: user,
            mfa: "Password",
            idleTimeoutMs: 30 * MIN,
            absoluteTimeoutMs: 60 * MIN,
          });
          const first = await refreshTokens.insert({
            tokenHash: sha256Hex(`srt_${uuid()}`),
            familyId: uuid(),
            sessionId: session.id,
            userId: user,
            realmId: realm,
            orgId: org,
            audience: "app",
            expiresAt: new Date(clock.now() + DAY),
          });
          clock.advance(20 * MIN);
          const h2 = sha256Hex(`srt_${uuid()}`);
          const grant = await refreshTokens.rotateForGrant(first.tokenHash, {
            tokenHash: h2,
            expiresAt: new Date(clock.now() + DAY),
          }, 30 * MIN);
          if (grant.outcome !== "rotated") throw new Error(`rotated expected, got ${grant.outcome}`);
          assert.deepEqual(grant.token, await refreshTokens.get(h2));
          assert.equal(grant.token.parentHash, first.tokenHash);
          assert.equal(grant.token.orgId, org);
          assert.equal(grant.token.audience, "app");
          assert.deepEqual(grant.session, await sessions.get(session.id));
          assert.equal(grant.session?.lastSeenAt.getTime(), clock.now());
          assert.equal(grant.session?.idleExpiresAt.getTime(), clock.now() + 30 * MIN);
          assert.equal(grant.userStatus, "Active");
          assert.equal(grant.member, true);
          assert.equal((await refreshTokens.get(first.tokenHash))?.usedAt?.getTime(), clock.now());

          // A replay changes nothing and is classified as `rotate` classifies it.
          const replay = await refreshTokens.rotateForGrant(first.tokenHash, {
            tokenHash: sha256Hex(`srt_${uuid()}`),
            expiresAt: new Date(clock.now() + DAY),
          }, 30 * MIN);
          assert.equal(replay.outcome, "reused");
          assert.equal((await sessions.get(session.id))?.lastSeenAt.getTime(), clock.now());

          // Moving the family out of the organization, with the user no longer a member, and the
          // user suspended: the grant rotates and reports both.
          await db.deleteFrom("org_memberships").where("user_id", "=", user).execute();
          await db.updateTable("users").set({ status: "Suspended" }).where("id", "=", user).execute();
          const h3 = sha256Hex(`srt_${uuid()}`);
          const lost = await refreshTokens.rotateForGrant(h2, {
            tokenHash: h3,
            expiresAt: new Date(clock.now() + DAY),
          }, 30 * MIN);
          if (lost.outcome !== "rotated") throw new Error(`rotated expected, got ${lost.outcome}`);
          assert.equal(lost.member, false);
          assert.equal(lost.userStatus, "Suspended");
          const moved = await refreshTokens.rotateForGrant(h3, {
            tokenHash: sha256Hex(`srt_${uuid()}`),
            expiresAt: new Date(clock.now() + DAY),
            orgId: null,
          }, 30 * MIN);
          if (moved.outcome !== "rotated") throw new Error(`rotated expected, got ${moved.outcome}`);
          assert.equal(moved.token.orgId, null);
          assert.equal(moved.member, true, "a family without an organization needs no membership");

          // An ended session is reported as null and not touched.
          clock.advance(61 * MIN);
          const lastHash = moved.token.tokenHash;
          const ended = await refreshTokens.rotateForGrant(lastHash, {
            tokenHash: sha256Hex(`srt_${uuid()}`),
            expiresAt: new Date(clock.now() + DAY),
          }, 30 * MIN);
          if (ended.outcome !== "rotated") throw new Error(`rotated expected, got ${ended.outcome}`);
          assert.equal(ended.session, null);
          assert.equal((await sessions.get(session.id))?.lastSeenAt.getTime(), clock.now() - 61 * MIN);

          // Unknown, expired and revoked tokens: nothing stored.
          assert.equal(
            (await refreshTokens.rotateForGrant(sha256Hex("never-issued"), {
              tokenHash: "z",
              expiresAt: new Date(),
            }, MIN))
              .outcome,
            "unknown",
          );
          assert.equal(await refreshTokens.get("z"), null);
          await refreshTokens.revokeFamily(first.familyId);
          assert.equal(
            (await refreshTokens.rotateForGrant(ended.token.tokenHash, {
              tokenHash: "z",
              expiresAt: new Date(),
            }, MIN))
              .outcome,
            "revoked",
          );
          assert.equal(await refreshTokens.get("z"), null);
        },
      );

      await t.step("refresh grants: concurrent grants of one token have one winner", async () => {
        const clock = clockAt();
        const { refreshTokens } = storesFor(db, clock);
        const user = await makeUser(db, realm);
        const token = await newFamily(clock, user);
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            refreshTokens.rotateForGrant(token.tokenHash, {
              tokenHash: sha256Hex(`grant-${token.tokenHash}-${i}`),
              expiresAt: new Date(clock.now() + DAY),
            }, 30 * MIN)),
        );
        assert.equal(results.filter((r) => r.outcome === "rotated").length, 1);
        assert.equal(results.filter((r) => r.outcome === "reused").length, 7);
        const family = await db.selectFrom("refresh_tokens").select("token_hash")
          .where("family_id", "=", token.familyId).execute();
        assert.equal(family.length, 2, "one successor stored");
      });

      await t.step(
        "service accounts: lookup by (realm, key), atomic secret rotation with overlap",
        async () => {
          const clock = clockAt();
          const { serviceAccounts } = storesFor(db, clock);
          const sa = await serviceAccounts.create({
            realmId: realm,
            key: `ci-${uuid()}`,
            displayName: "CI",
            secretHash: "h1",
          });
          assert.deepEqual(await serviceAccounts.getByKey(realm, sa.key), sa);
          await assert.rejects(
            serviceAccounts.create({ realmId: realm, key: sa.key, displayName: "dup", secretHash: "x" }),
            ConflictError,
          );
          const rotated = await serviceAccounts.rotateSecret(sa.id, "h2", 10 * MIN);
          assert.equal(rotated?.secretHash, "h2");
          assert.equal(rotated?.previousSecretHash, "h1");
          assert.deepEqual(acceptedSecretHashes(rotated!, clock.now()), ["h2", "h1"]);
          clock.advance(10 * MIN);
          assert.deepEqual(acceptedSecretHashes(rotated!, clock.now()), ["h2"]);
          assert.equal(await serviceAccounts.rotateSecret(uuid(), "h3", MIN), null);
          assert.equal(await serviceAccounts.setDisabled(sa.id, true), true);
          assert.equal((await serviceAccounts.get(sa.id))?.disabled, true);
          assert.ok((await serviceAccounts.list(realm)).some((a) => a.id === sa.id));
          assert.equal(await serviceAccounts.delete(sa.id), true);
          assert.equal(await serviceAccounts.get(sa.id), null);
        },
      );

      await t.step(
        "api keys: by token hash; revocation keeps the first time; unknown is a no-op",
        async () => {
          const clock = clockAt();
          const { apiKeys } = storesFor(db, clock);
          const user = await makeUser(db, realm);
          const hash = sha256Hex(`sk_${uuid()}`);
          const key = await apiKeys.create({
            realmId: realm,
            ownerKind: "User",
            ownerId: user,
            name: "laptop",
            tokenHash: hash,
            expiresAt: new Date(clock.now() + DAY),
          });
          assert.deepEqual(await apiKeys.getByTokenHash(hash), key);
          assert.equal(isApiKeyActive(key, clock.now()), true);
          assert.equal(isApiKeyActive(key, clock.now() + DAY), false);
          await apiKeys.recordUse(key.id);
          assert.equal((await apiKeys.get(key.id))?.lastUsedAt?.getTime(), clock.now());
          const revoked = await apiKeys.revoke(key.id);
          const firstRevocation = revoked?.revokedAt?.getTime();
          assert.equal(firstRevocation, clock.now());
          clock.advance(MIN);
          assert.equal((await apiKeys.revoke(key.id))?.revokedAt?.getTime(), firstRevocation);
          assert.equal(await apiKeys.revoke(uuid()), null);
          await apiKeys.recordUse(uuid());
          await assert.rejects(
            apiKeys.create({
              realmId: realm,
              ownerKind: "User",
              ownerId: user,
              name: "dup",
              tokenHash: hash,
            }),
            ConflictError,
          );
          assert.deepEqual((await apiKeys.listByOwner("User", user)).map((k) => k.id), [key.id]);
          assert.equal(await apiKeys.delete(key.id), true);
        },
      );

      await t.step("clients: create, idempotent upsert, update", async () => {
        const { clients } = storesFor(db, clockAt());
        const clientId = `app-${uuid()}`;
        const created = await clients.upsert(realm, clientId, {
          clientType: "confidential",
          redirectUris: ["https://app.example/cb"],
          allowedScopes: ["openid"],
          secretHash: "$argon2id$s",
          secretAlgorithm: "argon2id",
          secretResetRequired: true,
        });
        assert.equal(created.created, true);
        assert.deepEqual(created.client.redirectUris, ["https://app.example/cb"]);
        const again = await clients.upsert(realm, clientId, { clientType: "confidential", suspended: true });
        assert.equal(again.created, false);
        assert.equal(again.client.id, created.client.id);
        assert.equal(again.client.suspended, true);
        assert.deepEqual(again.client.redirectUris, ["https://app.example/cb"], "omitted fields are kept");
        assert.equal(again.client.secretHash, "$argon2id$s");
        await assert.rejects(clients.create(realm, clientId, { clientType: "public" }), ConflictError);
        const updated = await clients.update(created.client.id, {
          allowedScopes: ["openid", "email"],
          secretHash: null,
        });
        assert.deepEqual(updated?.allowedScopes, ["openid", "email"]);
        assert.equal(updated?.secretHash, null);
        // getByClientId adds the row's version (checked by refresh grants).
        const { version, ...read } = (await clients.getByClientId(realm, clientId))!;
        assert.equal(typeof version, "string");
        assert.deepEqual(read, updated);
        assert.equal(await clients.update(uuid(), { suspended: true }), null);
        assert.ok((await clients.list(realm)).some((c) => c.clientId === clientId));
        assert.equal(await clients.delete(created.client.id), true);
      });
    } finally {
      await database.close();
    }
  });
}
