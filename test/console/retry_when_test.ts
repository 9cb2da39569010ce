/**
 * The wait a blocked sign-in shows (issue 27): the account pages' and the console's "Too many
 * attempts" name when to try again, from the answer's `retryAfterSeconds`, in the reader's language.
 */
import { strict as assert } from "node:assert";
import { retryWhen } from "../../console/account/i18n.ts";

Deno.test("retryWhen: seconds under a minute, whole minutes rounded up, per language", () => {
  assert.equal(retryWhen("en", 45), "in 45 seconds");
  assert.equal(retryWhen("en", 0.2), "in 1 second");
  assert.equal(retryWhen("en", 579), "in 10 minutes");
  assert.equal(retryWhen("en", 60), "in 1 minute");
  assert.equal(retryWhen("fr", 579), "dans 10 minutes");
});
