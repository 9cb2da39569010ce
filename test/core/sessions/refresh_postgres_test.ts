/**
 * On a real Postgres server: two concurrent refreshes with the same token rotate it exactly
 * once, the loser is a replay, and the family ends revoked with its session ended (issue 19:
 * a family revoked for reuse ends its session). The winner may still be refused when the replay
 * ended the session before the winner's answer was minted: at most one refresh answers. A grant
 * is one database statement (the rotation, the session's touch and the user and membership reads
 * commit together), so a touch that fails leaves the presented token unused.
 */
import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { ManualClock } from "../../../core/clock.ts";
import { loadConfig } from "../../../core/config/mod.ts";
import type { SvcEvent } from "../../../core/events/sink.ts";
import { cryptoRandom } from "../../../core/random.ts";
import { REFRESH_REUSE_EVENT } from "../../../core/sessions/service.ts";
import { InvalidRefreshTokenError } from "../../../core/tokens/errors.ts";
import { createAuthStack } from "../../../http/auth/stack.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { freshPostgres } from "../../support/db.ts";
import { seeder } from "../../support/seed.ts";
import { T0 } from "../../support/auth.ts";

Deno.test("postgres: concurrent refreshes of one token give one new token and a revoked family", async () => {
  const database = await freshPostgres({ maxConnections: 6 });
  try {
    const clock = new ManualClock(T0);
    const storage = createSqlStorage(database, { clock, random: cryptoRandom });
    const events: SvcEvent[] = [];
    const auth = createAuthStack({
      config: loadConfig({ env: {} }).config,
      storage,
      clock,
      random: cryptoRandom,
      events: { emit: (e) => void events.push(e) },
    });
    const seed = seeder(database.db);
    const realmId = await seed.realm();
    const userId = await seed.user(realmId);

    for (let round = 0; round < 10; round++) {
      const { tokens } = await auth.sessions.signIn({ realmId, userId, mfa: "Password" });
      const familyId = (await auth.sessions.refreshRecord(tokens.refreshToken))!.familyId;
      const results = await Promise.allSettled([
        auth.sessions.refresh(tokens.refreshToken),
        auth.sessions.refresh(tokens.refreshToken),
      ]);
      const winners = results.filter((r) => r.status === "fulfilled");
      const losers = results.filter((r) => r.status === "rejected");
      assert.ok(winners.length <= 1, `round ${round}: at most one refresh answers`);
      for (const loser of losers) {
        assert.ok((loser as PromiseRejectedResult).reason instanceof InvalidRefreshTokenError);
      }

      const rows = await database.db.selectFrom("refresh_tokens").selectAll().where(
        "family_id",
        "=",
        familyId,
      )
        .execute();
      assert.equal(rows.length, 2, "the original and exactly one successor");
      assert.equal(rows.filter((r) => r.parent_hash !== null).length, 1);
      assert.ok(rows.every((r) => r.revoked_at !== null), "the family ends revoked");
      for (const winner of winners) {
        const successor = (winner as PromiseFulfilledResult<{ tokens: { refreshToken: string } }>).value;
        await assert.rejects(auth.sessions.refresh(successor.tokens.refreshToken), InvalidRefreshTokenError);
      }
      const sessionId = rows[0].session_id;
      assert.equal(await storage.sessions.getActive(sessionId), null, "the session ended with its family");
      assert.ok(events.some((e) => e.kind === REFRESH_REUSE_EVENT && e.data.familyId === familyId));
    }
  } finally {
    await database.close();
  }
});

async function bed() {
  const database = await freshPostgres({ maxConnections: 4 });
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
  return { database, storage, auth, realmId, userId };
}

Deno.test("postgres: a refresh grant is one database statement (one commit)", async () => {
  const { database, auth, realmId, userId } = await bed();
  try {
    let { tokens } = await auth.sessions.signIn({ realmId, userId, mfa: "Password" });
    ({ tokens } = await auth.sessions.refresh(tokens.refreshToken)); // the key ring is loaded
    for (let i = 0; i < 3; i++) {
      const before = database.pool.acquisitions;
      ({ tokens } = await auth.sessions.refresh(tokens.refreshToken));
      assert.equal(
        database.pool.acquisitions - before,
        1,
        "rotation, touch and reads in one statement",
      );
    }
  } finally {
    await database.close();
  }
});

Deno.test("postgres: a session touch that fails rolls the rotation back: the token stays usable", async () => {
  const { database, auth, realmId, userId } = await bed();
  try {
    const { tokens } = await auth.sessions.signIn({ realmId, userId, mfa: "Password" });
    // The touch runs inside the grant's statement: a trigger makes it fail there.
    await sql.raw(`CREATE FUNCTION fail_touch() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'connection lost'; END $$`).execute(database.db);
    await sql.raw(`CREATE TRIGGER fail_touch BEFORE UPDATE ON sessions
      FOR EACH ROW EXECUTE FUNCTION fail_touch()`).execute(database.db);
    await assert.rejects(auth.sessions.refresh(tokens.refreshToken), /connection lost/);
    await sql.raw(`DROP TRIGGER fail_touch ON sessions`).execute(database.db);
    const record = await auth.sessions.refreshRecord(tokens.refreshToken);
    assert.equal(record!.usedAt, null, "the rotation rolled back with the touch");
    const next = await auth.sessions.refresh(tokens.refreshToken);
    assert.ok(next.tokens.refreshToken.startsWith("srt_"));
  } finally {
    await database.close();
  }
});
