import assert from "node:assert/strict";
import { SVC_VERSION } from "../../core/version.ts";

Deno.test("SVC_VERSION is the version of deno.json and package.json", async () => {
  for (const file of ["deno.json", "package.json"]) {
    const manifest = JSON.parse(await Deno.readTextFile(new URL(`../../${file}`, import.meta.url)));
    assert.equal(SVC_VERSION, manifest.version, file);
  }
});
