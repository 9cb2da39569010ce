/**
 * fast-check: the refresh grace window. A rotated token presented again within the window (its
 * successor unused) answers the same successor and leaves the family alive, however many times;
 * presented after the window, after the successor was used, or without a window, it revokes the
 * family as before. svc's own window (`SVC_REFRESH_GRACE_SECONDS`) covers svc's own tokens; the
 * seal never holds the successor in plaintext and opens only with the rotated token.
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { openSuccessor, sealSuccessor } from "../../../core/tokens/grace.ts";
import { InvalidRefreshTokenError } from "../../../core/tokens/errors.ts";
import { newRefreshToken } from "../../../core/tokens/refresh.ts";
import { seededRandom } from "../../../core/random.ts";
import { authBed } from "../../support/auth.ts";

Deno.test("grace seal: opens to the successor with the rotated token only, never holds it in clear", () => {
  const random = seededRandom(7);
  fc.assert(
    fc.property(fc.nat(), () => {
      const rotated = newRefreshToken(random).token;
      const successor = newRefreshToken(random).token;
      const other = newRefreshToken(random).token;
      const sealed = sealSuccessor(rotated, successor);
      assert.equal(openSuccessor(rotated, sealed), successor);
      assert.notEqual(openSuccessor(other, sealed), successor);
      assert.ok(!sealed.includes(successor.slice(4)));
    }),
    { numRuns: 200 },
  );
});

Deno.test("refresh grace window: same successor within it, family revoked outside it", async () => {
  const bed = await authBed();
  const { realmId, userId } = await bed.realmWithUser();
  const sessions = bed.auth.sessions;
  const familyRows = async (token: string) => {
    const familyId = (await sessions.refreshRecord(token))!.familyId;
    return await bed.database.db.selectFrom("refresh_tokens").selectAll().where("family_id", "=", familyId)
      .execute();
  };

  await fc.assert(
    fc.asyncProperty(
      fc.record({
        grace: fc.integer({ min: 0, max: 60 }),
        // Seconds after the rotation at which the rotated token comes back (ascending).
        delays: fc.array(fc.integer({ min: 0, max: 90 }), { minLength: 1, maxLength: 5 })
          .map((d) => d.sort((a, b) => a - b)),
        useSuccessorFirst: fc.boolean(),
      }),
      async ({ grace, delays, useSuccessorFirst }) => {
        const start = await bed.signIn({ realmId, userId });
        const first = start.tokens.refreshToken;
        const rotated = await sessions.refresh(first, { graceSeconds: grace });
        const successor = rotated.tokens.refreshToken;
        if (useSuccessorFirst) await sessions.refresh(successor, { graceSeconds: grace });
        const rotatedAt = bed.clock.now();
        let revoked = false;
        for (const delay of delays) {
          bed.clock.set(rotatedAt + delay * 1000);
          const within = grace > 0 && delay <= grace && !useSuccessorFirst && !revoked;
          if (within) {
            const again = await sessions.refresh(first, { graceSeconds: grace });
            assert.equal(again.tokens.refreshToken, successor, "the same successor");
            assert.equal(again.session.id, rotated.session.id);
          } else {
            await assert.rejects(sessions.refresh(first, { graceSeconds: grace }), InvalidRefreshTokenError);
            revoked = true;
          }
        }
        const rows = await familyRows(first);
        assert.equal(rows.length, useSuccessorFirst ? 3 : 2, "no successor was ever added by a replay");
        if (revoked) {
          assert.ok(rows.every((row) => row.revoked_at !== null), "a replay left the family alive");
          await assert.rejects(
            sessions.refresh(successor, { graceSeconds: grace }),
            InvalidRefreshTokenError,
          );
        } else {
          assert.ok(rows.every((row) => row.revoked_at === null));
          // The successor still rotates normally.
          const next = await sessions.refresh(successor, { graceSeconds: grace });
          assert.notEqual(next.tokens.refreshToken, successor);
        }
        bed.clock.advance(3_600_000);
      },
    ),
    { numRuns: 60 },
  );
  await bed.close();
});

Deno.test("svc's own grace window (SVC_REFRESH_GRACE_SECONDS) covers svc's own tokens only", async () => {
  const bed = await authBed();
  try {
    const { realmId, userId } = await bed.realmWithUser();
    const app = bed.appWith({ SVC_REFRESH_GRACE_SECONDS: "10" });
    const refresh = (refreshToken: string) =>
      app.app.request("/auth/refresh", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ refreshToken }),
      });
    const { tokens } = await app.auth.sessions.signIn({ realmId, userId, mfa: "Password" });
    const first = await refresh(tokens.refreshToken);
    assert.equal(first.status, 200);
    const successor = (await first.json()).refreshToken;
    bed.clock.advance(9_000);
    const again = await refresh(tokens.refreshToken);
    assert.equal(again.status, 200);
    assert.equal((await again.json()).refreshToken, successor);
    bed.clock.advance(2_000);
    assert.equal((await refresh(tokens.refreshToken)).status, 401);
    assert.equal((await refresh(successor)).status, 401, "the family is revoked");

    // A token of another audience (an OIDC client's) gets no grace from svc's own window.
    const oidc = await app.auth.sessions.openSession({
      realmId,
      userId,
      mfa: "Password",
      audience: "some-app",
    }, {
      refresh: true,
    });
    await app.auth.sessions.refresh(oidc.refreshToken!);
    await assert.rejects(app.auth.sessions.refresh(oidc.refreshToken!), InvalidRefreshTokenError);
  } finally {
    await bed.close();
  }
});
