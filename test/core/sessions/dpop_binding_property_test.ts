/**
 * fast-check: a key-bound refresh family (RFC 9449) only advances with its key. For any sequence
 * of refreshes presenting the family's key, another key, or none: the family's key rotates (while
 * the family lives) and binds the new access token; another key is refused and rotates nothing;
 * no key is refused and ends the family; after that nothing refreshes. An unbound family refreshes
 * with any key or none, binding the access token to whatever key was shown.
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { DpopProofError } from "../../../core/dpop/proof.ts";
import { InvalidRefreshTokenError } from "../../../core/tokens/errors.ts";
import { authBed } from "../../support/auth.ts";

const OWN = "a".repeat(43);
const OTHER = "b".repeat(43);

Deno.test("a DPoP-bound refresh family advances only with its key (property)", async () => {
  const bed = await authBed();
  const { realmId, userId } = await bed.realmWithUser();
  const sessions = bed.auth.sessions;
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.boolean(),
        fc.array(fc.constantFrom("own", "other", "none"), { minLength: 1, maxLength: 8 }),
        async (bound, presentations) => {
          const start = await bed.signIn({
            realmId,
            userId,
            ...(bound ? { dpop: { jkt: OWN, bindRefresh: true } } : {}),
          });
          let token = start.tokens.refreshToken;
          let alive = true;
          for (const shown of presentations) {
            const jkt = shown === "own" ? OWN : shown === "other" ? OTHER : null;
            const before = await sessions.refreshRecord(token);
            const outcome = await sessions.refresh(token, { dpopJkt: jkt }).then(
              (issued) => ({ issued }),
              (error) => ({ error }),
            );
            if ("issued" in outcome) {
              assert.ok(alive, "a dead family refreshed");
              assert.ok(!bound || shown === "own", `a bound family refreshed with ${shown}`);
              assert.deepEqual(outcome.issued.access.cnf, jkt === null ? undefined : { jkt });
              assert.equal(outcome.issued.tokens.tokenType, jkt === null ? "Bearer" : "DPoP");
              token = outcome.issued.tokens.refreshToken;
              continue;
            }
            const { error } = outcome;
            if (!alive) {
              assert.ok(error instanceof InvalidRefreshTokenError || error instanceof DpopProofError);
              continue;
            }
            assert.ok(bound, `an unbound family refused ${shown}: ${error}`);
            assert.ok(error instanceof DpopProofError && error.reason === "key_mismatch", String(error));
            const after = await sessions.refreshRecord(token);
            if (shown === "other") {
              assert.equal(after?.usedAt, null, "another key's refusal rotated the token");
              assert.equal(after?.revokedAt, null);
            } else {
              assert.equal(shown, "none");
              assert.equal(before?.usedAt, null);
              assert.notEqual(after?.revokedAt, null, "no proof: the family ends");
              alive = false;
            }
          }
          if (!alive) {
            assert.equal(
              await bed.storage.sessions.getActive((await sessions.refreshRecord(token))!.sessionId),
              null,
            );
          }
        },
      ),
      { numRuns: 40 },
    );
  } finally {
    await bed.close();
  }
});
