/**
 * fast-check: for any interleaving of presentations of one refresh family (sequential and
 * concurrent batches, fresh tokens and replays), at most one successor exists per token, a
 * replay always revokes the whole family, and no token of a revoked family ever refreshes.
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { InvalidRefreshTokenError } from "../../../core/tokens/errors.ts";
import { REFRESH_REUSE_EVENT } from "../../../core/sessions/service.ts";
import { authBed } from "../../support/auth.ts";

Deno.test("refresh family: one successor per token, replay revokes all, revoked never refreshes", async () => {
  const bed = await authBed();
  const { realmId, userId } = await bed.realmWithUser();
  const sessions = bed.auth.sessions;

  await fc.assert(
    fc.asyncProperty(
      // Batches of presentations; each index picks one of the tokens issued so far.
      fc.array(fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 8 }),
      async (batches) => {
        const start = await bed.signIn({ realmId, userId });
        const familyId = (await sessions.refreshRecord(start.tokens.refreshToken))!.familyId;
        const issued = [start.tokens.refreshToken];
        const used = new Set<string>();
        let replayed = false;
        const eventsBefore = bed.events.length;

        for (const batch of batches) {
          const picks = batch.map((i) => issued[i % issued.length]);
          const familyRevokedBefore = replayed;
          const results = await Promise.allSettled(picks.map((token) => sessions.refresh(token)));
          const presentedUsed = picks.some((token) => used.has(token));
          results.forEach((result, i) => {
            if (result.status === "fulfilled") {
              assert.ok(!familyRevokedBefore, "a token of a revoked family refreshed");
              assert.ok(!used.has(picks[i]), "a used token refreshed");
              used.add(picks[i]);
              issued.push(result.value.tokens.refreshToken);
            } else {
              assert.ok(result.reason instanceof InvalidRefreshTokenError, String(result.reason));
            }
          });
          // Within a batch, the same token presented twice: at most one of them succeeded.
          const winners = results.filter((r) => r.status === "fulfilled").length;
          assert.ok(winners <= new Set(picks).size);
          // Any refusal in this family is a replay (a used token, or the same token twice at once).
          if (presentedUsed || winners < picks.length) replayed = true;
        }

        const rows = await bed.database.db.selectFrom("refresh_tokens").selectAll()
          .where("family_id", "=", familyId).execute();
        const children = new Map<string, number>();
        for (const row of rows) {
          if (row.parent_hash !== null) {
            children.set(row.parent_hash, (children.get(row.parent_hash) ?? 0) + 1);
          }
        }
        for (const count of children.values()) assert.equal(count, 1, "two successors of one token");
        assert.equal(rows.length, 1 + [...children.values()].length);
        const reuseEvents = bed.events.slice(eventsBefore).filter((e) => e.kind === REFRESH_REUSE_EVENT);
        if (replayed) {
          assert.ok(rows.every((row) => row.revoked_at !== null), "a replay left part of the family alive");
          assert.ok(reuseEvents.length >= 1);
          // And nothing of the family ever refreshes again.
          for (const token of issued) await assert.rejects(sessions.refresh(token), InvalidRefreshTokenError);
        } else {
          assert.equal(reuseEvents.length, 0);
          assert.ok(rows.every((row) => row.revoked_at === null));
        }
      },
    ),
    { numRuns: 40 },
  );
  await bed.close();
});
