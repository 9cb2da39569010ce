/**
 * The generated reference pages in docs/reference/ are what `cli/docs-reference.ts` renders from
 * the sources today: a setting, command, event kind or error code added without regenerating
 * fails here.
 */
import assert from "node:assert/strict";
import { errorCodesOf, referencePages, serverSources } from "../../cli/docs-reference.ts";

const root = new URL("../../", import.meta.url);

Deno.test("docs/reference pages are generated from the current sources (run `npx deno task docs:reference`)", async () => {
  for (const [path, expected] of referencePages(await serverSources(root))) {
    const actual = await Deno.readTextFile(new URL(path, root));
    assert.ok(actual === expected, `${path} is stale: run \`npx deno task docs:reference\``);
  }
});

Deno.test("the settings reference lists every variable `svc help` prints", () => {
  const page = referencePages(new Map()).get("docs/reference/settings.md")!;
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

Deno.test("error codes are read from SvcError calls: code, a literal status (else 400), the first file", () => {
  const sources = new Map([
    [
      "core/b.ts",
      'class A extends SvcError {\n  constructor() {\n    super("too_many", `Wait (${f(1, 2)}), then retry`, 429);\n  }\n}',
    ],
    [
      "core/a.ts",
      'throw new SvcError(\n  "too_many",\n  "again, later",\n  429,\n  { retryAfterSeconds: 3 },\n);',
    ],
    ["http/c.ts", 'throw new SvcError("plain_refusal", "no");\nsuper("Not a code, a message", details);'],
    ["http/d.ts", 'throw new SvcError("gone_away", message, status);'],
  ]);
  assert.deepEqual(errorCodesOf(sources), [
    { code: "gone_away", status: 400, file: "http/d.ts" },
    { code: "plain_refusal", status: 400, file: "http/c.ts" },
    { code: "too_many", status: 429, file: "core/a.ts" },
  ]);
});

Deno.test("the error reference names the codes clients meet most", async () => {
  const page = referencePages(await serverSources(root)).get("docs/reference/errors.md")!;
  for (
    const [code, status] of [["invalid_request", 400], ["not_found", 404], ["login_blocked", 429]] as const
  ) {
    assert.match(page, new RegExp("`" + code + "` \\| " + status + " \\|"));
  }
});
