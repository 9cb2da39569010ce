/**
 * Races on a real Postgres server with a 20-connection pool: the guarantees that PGlite's
 * single connection cannot exercise.
 */
import assert from "node:assert/strict";
import { sha256Hex } from "../../../core/digest.ts";
import { ConflictError } from "../../../core/errors.ts";
import { freshPostgres } from "../../support/db.ts";
import { bytesOf, clockAt, makeRealm, makeUser, storesFor, uuid } from "./fixtures.ts";

const N = 20;
const DAY = 86_400_000;

Deno.test("postgres (20 connections): concurrent credential-store races", async (t) => {
  const database = await freshPostgres({ maxConnections: N });
  const db = database.db;
  try {
    const realm = await makeRealm(db);

    await t.step("20 concurrent audit appends to one realm: gap-free sequence, valid chain", async () => {
      const { audit } = storesFor(db, clockAt());
      const r = await makeRealm(db);
      const entries = await Promise.all(
        Array.from(
          { length: N },
          (_, i) =>
            audit.append(r, { action: `op.${i}`, actorId: `admin-${i}`, actorKind: "User", after: { i } }),
        ),
      );
      assert.deepEqual(
        entries.map((e) => e.seq).sort((a, b) => a - b),
        Array.from({ length: N }, (_, i) => i + 1),
      );
      assert.deepEqual(await audit.verifyChain(r), { ok: true, count: N });
      // Two realms appended concurrently stay independent.
      const other = await makeRealm(db);
      await Promise.all(
        Array.from(
          { length: N },
          (_, i) => audit.append(i % 2 ? r : other, { action: "mixed", actorId: "x", actorKind: "System" }),
        ),
      );
      assert.deepEqual(await audit.verifyChain(r), { ok: true, count: N + N / 2 });
      assert.deepEqual(await audit.verifyChain(other), { ok: true, count: N / 2 });
    });

    await t.step("20 concurrent rotations of one refresh token: exactly one winner", async () => {
      const clock = clockAt();
      const { refreshTokens } = storesFor(db, clock);
      const user = await makeUser(db, realm);
      const token = await refreshTokens.insert({
        tokenHash: sha256Hex(`srt_${uuid()}`),
        familyId: uuid(),
        sessionId: uuid(),
        userId: user,
        realmId: realm,
        expiresAt: new Date(clock.now() + 30 * DAY),
      });
      const results = await Promise.all(
        Array.from({ length: N }, (_, i) =>
          refreshTokens.rotate(token.tokenHash, {
            tokenHash: sha256Hex(`srt_next_${i}_${token.tokenHash}`),
            expiresAt: new Date(clock.now() + 30 * DAY),
          })),
      );
      assert.equal(results.filter((r) => r.outcome === "rotated").length, 1);
      assert.equal(results.filter((r) => r.outcome === "reused").length, N - 1);
      const family = await db.selectFrom("refresh_tokens").select("token_hash").where(
        "family_id",
        "=",
        token.familyId,
      )
        .execute();
      assert.equal(family.length, 2, "one successor stored");
    });

    await t.step("20 concurrent TOTP presentations of one step: one accepted", async () => {
      const { totp } = storesFor(db, clockAt());
      const user = await makeUser(db, realm);
      await totp.begin(user, bytesOf(20));
      await totp.confirm(user, 1);
      const results = await Promise.all(Array.from({ length: N }, () => totp.advanceStep(user, 2)));
      assert.equal(results.filter(Boolean).length, 1);
    });

    await t.step("20 concurrent passkey counter updates: the counter ends at the maximum", async () => {
      const { passkeys } = storesFor(db, clockAt());
      const user = await makeUser(db, realm);
      const c = await passkeys.create({
        userId: user,
        credentialId: bytesOf(32, 5),
        publicKey: bytesOf(8),
        userVerificationCapable: true,
      });
      const counts = Array.from({ length: N }, (_, i) => ((i * 7) % N) + 1);
      await Promise.all(counts.map((n) => passkeys.updateCounter(c.id, n)));
      assert.equal((await passkeys.get(c.id))?.signCount, N);
    });

    await t.step("20 concurrent ceremony consumptions: one succeeds", async () => {
      const { ceremonies } = storesFor(db, clockAt());
      const c = await ceremonies.create({ kind: "authentication", challenge: "c" });
      const results = await Promise.all(Array.from({ length: N }, () => ceremonies.consume(c.id)));
      assert.equal(results.filter((r) => r !== null).length, 1);
    });

    await t.step(
      "20 concurrent signing-key rotations: one primary, every loser a ConflictError",
      async () => {
        const { signingKeys } = storesFor(db, clockAt());
        const r = await makeRealm(db);
        await signingKeys.insert(r, { kid: "k0", privateKey: bytesOf(8), isPrimary: true });
        const results = await Promise.allSettled(
          Array.from(
            { length: N },
            (_, i) => signingKeys.rotate(r, { kid: `k${i + 1}`, privateKey: bytesOf(8, i) }),
          ),
        );
        const won = results.filter((x) => x.status === "fulfilled");
        assert.ok(won.length >= 1);
        for (const x of results) {
          if (x.status === "rejected") assert.ok(x.reason instanceof ConflictError, String(x.reason));
        }
        const primaries = await db.selectFrom("signing_keys").select("kid").where("realm_id", "=", r)
          .where("is_primary", "=", true).execute();
        assert.equal(primaries.length, 1);
        const retired = await db.selectFrom("signing_keys").select("kid").where("realm_id", "=", r)
          .where("retired_at", "is not", null).execute();
        assert.equal(retired.length, won.length, "each successful rotation retired exactly one key");
      },
    );

    await t.step("20 concurrent password replacements: exactly one credential remains", async () => {
      const { passwords } = storesFor(db, clockAt());
      const user = await makeUser(db, realm);
      await Promise.all(
        Array.from(
          { length: N },
          (_, i) =>
            passwords.replace(user, { algorithm: i % 2 ? "argon2id" : "pbkdf2-sha256", hash: `h${i}` }),
        ),
      );
      assert.equal((await passwords.list(user)).length, 1);
    });

    await t.step("20 concurrent webhook workers never claim one delivery twice", async () => {
      const clock = clockAt();
      clock.advance(5000 * DAY);
      const { webhooks } = storesFor(db, clock);
      const r = await makeRealm(db);
      const endpoint = await webhooks.createEndpoint({
        realmId: r,
        url: "https://hooks.example/z",
        secret: "whsec_z",
        eventPatterns: ["*"],
      });
      const queued = await Promise.all(
        Array.from({ length: 60 }, (_, i) => webhooks.enqueue(endpoint.id, "e", `${i}`)),
      );
      const claims = await Promise.all(Array.from({ length: N }, () => webhooks.claimDue({ limit: 5 })));
      const ids = claims.flat().filter((c) => c.endpoint.id === endpoint.id).map((c) => c.delivery.id);
      assert.equal(new Set(ids).size, ids.length, "no delivery claimed twice");
      assert.ok(ids.length >= 1 && ids.length <= queued.length);
      for (const c of claims.flat()) assert.equal(c.delivery.attempts, 1);
    });

    await t.step("20 concurrent failures of one endpoint's deliveries: disabled exactly once", async () => {
      const clock = clockAt();
      const { webhooks } = storesFor(db, clock);
      const r = await makeRealm(db);
      const endpoint = await webhooks.createEndpoint({
        realmId: r,
        url: "https://hooks.example/y",
        secret: "whsec_y",
        eventPatterns: ["*"],
      });
      const deliveries = await Promise.all(
        Array.from({ length: N }, (_, i) => webhooks.enqueue(endpoint.id, "e", `${i}`)),
      );
      const outcomes = await Promise.all(
        deliveries.map((d) => webhooks.markFailed(d.id, { error: "boom" }, { retryDelaysMs: [] })),
      );
      assert.equal(outcomes.filter((o) => o.endpointDisabled).length, 1);
      assert.equal((await webhooks.getEndpoint(endpoint.id))?.consecutiveFailures, N);
    });
  } finally {
    await database.close();
  }
});
