/**
 * The generated reference pages in docs/reference/ are what `cli/docs-reference.ts` renders from
 * the sources today: a setting, command or event kind added without regenerating fails here.
 */
import assert from "node:assert/strict";
import { referencePages } from "../../cli/docs-reference.ts";

const root = new URL("../../", import.meta.url);

Deno.test("docs/reference pages are generated from the current sources (run `npx deno task docs:reference`)", async () => {
  for (const [path, expected] of referencePages()) {
    const actual = await Deno.readTextFile(new URL(path, root));
    assert.ok(actual === expected, `${path} is stale: run \`npx deno task docs:reference\``);
  }
});

Deno.test("the settings reference lists every variable `svc help` prints", () => {
  const page = referencePages().get("docs/reference/settings.md")!;
  for (
    const name of [
      "SVC_HOST",
      "SVC_DATABASE_URL",
      "SVC_PASSWORD_MAX_BCRYPT_COST",
      "SVC_OUTBOUND_ALLOW_PRIVATE",
    ]
  ) {
    assert.match(page, new RegExp("`" + name + "`"));
  }
});
