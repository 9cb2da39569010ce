/**
 * The console's dates (issue 27): an instant within a week reads relative to now, in the reader's
 * language, beside the local date; past a week the date alone.
 */
import { strict as assert } from "node:assert";
import { relativeTime } from "../../console/admin/time.ts";

Deno.test("relativeTime: seconds, minutes, hours and days, past and future; nothing past a week", () => {
  const now = Date.UTC(2026, 10, 27, 7, 0, 0);
  const at = (ms: number) => new Date(now + ms);
  assert.equal(relativeTime(at(-30_000), now, "en"), "30 seconds ago");
  assert.equal(relativeTime(at(-59_600), now, "en"), "1 minute ago", "never '60 seconds ago'");
  assert.equal(relativeTime(at(-2 * 60_000), now, "en"), "2 minutes ago");
  assert.equal(relativeTime(at(5 * 60_000), now, "en"), "in 5 minutes");
  assert.equal(relativeTime(at(-3 * 3_600_000), now, "en"), "3 hours ago");
  assert.equal(relativeTime(at(-86_400_000), now, "en"), "yesterday");
  assert.equal(relativeTime(at(-3 * 86_400_000), now, "fr"), "il y a 3 jours");
  assert.equal(relativeTime(at(-8 * 86_400_000), now, "en"), null);
  assert.equal(relativeTime(new Date(NaN), now, "en"), null);
});
