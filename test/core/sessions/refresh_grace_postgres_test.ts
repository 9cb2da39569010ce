/**
 * On a real Postgres server (separate connections): 20 concurrent presentations of one refresh
 * token under a grace window all answer the same successor, with one family left alive and one
 * successor row; the same race after the window, or without a window, revokes the family as
 * reuse detection always did.
 */
import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { loadConfig } from "../../../core/config/mod.ts";
import { cryptoRandom } from "../../../core/random.ts";
import { InvalidRefreshTokenError } from "../../../core/tokens/errors.ts";
import { createAuthStack } from "../../../http/auth/stack.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { T0 } from "../../support/auth.ts";
import { freshPostgres } from "../../support/db.ts";
import { seeder } from "../../support/seed.ts";

const RACERS = 20;

Deno.test("postgres: 20 concurrent presentations within the grace window get one successor", async () => {
  const database = await freshPostgres({ maxConnections: 10 });
  try {
    const clock = new ManualClock(T0);
    const storage = createSqlStorage(database, { clock, random: cryptoRandom });
    const auth = createAuthStack({
      config: loadConfig({ env: {} }).config,
      storage,
      clock,
      random: cryptoRandom,
      events: { emit: () => {} },
    });
    const seed = seeder(database.db);
    const realmId = await seed.realm();
    const userId = await seed.user(realmId);
    await auth.keys.ensurePrimary(realmId);
    const family = async (token: string) => {
      const familyId = (await auth.sessions.refreshRecord(token))!.familyId;
      return await database.db.selectFrom("refresh_tokens").selectAll().where("family_id", "=", familyId)
        .execute();
    };
    const race = (token: string, graceSeconds: number) =>
      Promise.allSettled(
        Array.from({ length: RACERS }, () => auth.sessions.refresh(token, { graceSeconds })),
      );

    for (let round = 0; round < 3; round++) {
      // Within the window: every presentation answers, all with the same successor.
      const { tokens } = await auth.sessions.signIn({ realmId, userId, mfa: "Password" });
      const results = await race(tokens.refreshToken, 30);
      const answered = results.flatMap((r) => r.status === "fulfilled" ? [r.value.tokens.refreshToken] : []);
      assert.equal(answered.length, RACERS, JSON.stringify(results.filter((r) => r.status === "rejected")));
      assert.equal(new Set(answered).size, 1, "one successor for all");
      const rows = await family(tokens.refreshToken);
      assert.equal(rows.length, 2, "the original and one successor");
      assert.ok(rows.every((row) => row.revoked_at === null), "the family is alive");
      assert.ok(
        rows.every((row) => row.grace_successor === null || !row.grace_successor.includes(answered[0])),
      );
      const next = await auth.sessions.refresh(answered[0], { graceSeconds: 30 });
      assert.ok(next.tokens.refreshToken !== answered[0]);

      // After the window: the rotated token's presentations are replays; the family is revoked.
      const late = await auth.sessions.signIn({ realmId, userId, mfa: "Password" });
      const successor = (await auth.sessions.refresh(late.tokens.refreshToken, { graceSeconds: 30 })).tokens
        .refreshToken;
      clock.advance(31_000);
      const lateResults = await race(late.tokens.refreshToken, 30);
      assert.ok(
        lateResults.every((r) => r.status === "rejected" && r.reason instanceof InvalidRefreshTokenError),
      );
      assert.ok((await family(late.tokens.refreshToken)).every((row) => row.revoked_at !== null));
      await assert.rejects(auth.sessions.refresh(successor), InvalidRefreshTokenError);

      // Opted out: the race is reuse detection as before (at most one answer, family revoked).
      const off = await auth.sessions.signIn({ realmId, userId, mfa: "Password" });
      const offResults = await race(off.tokens.refreshToken, 0);
      assert.ok(offResults.filter((r) => r.status === "fulfilled").length <= 1);
      const offRows = await family(off.tokens.refreshToken);
      assert.equal(offRows.length, 2);
      assert.ok(offRows.every((row) => row.revoked_at !== null && row.grace_successor === null));
    }
  } finally {
    await database.close();
  }
});
