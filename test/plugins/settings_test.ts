import { strict as assert } from "node:assert";
import * as v from "valibot";
import { pluginRealm, realmSetting, secondsSetting } from "../../plugins/settings.ts";
import type { Realm } from "../../core/storage/realms.ts";

Deno.test("secondsSetting: numbers and digits within the range; the fallback when unset", async (t) => {
  const schema = v.object({ ttl: secondsSetting(10, 600, 60) });
  const table: [unknown, number | null][] = [
    [undefined, 60],
    [10, 10],
    [600, 600],
    ["120", 120],
    [9, null],
    [601, null],
    ["12.5", null],
    [12.5, null],
    ["-5", null],
    ["", null],
    ["1e3", null],
    [true, null],
  ];
  for (const [input, expected] of table) {
    await t.step(`${JSON.stringify(input)} → ${expected ?? "refused"}`, () => {
      const result = v.safeParse(schema, input === undefined ? {} : { ttl: input });
      if (expected === null) {
        assert.equal(result.success, false);
      } else {
        assert.equal(result.success, true);
        assert.equal(result.output.ttl, expected);
      }
    });
  }
  await t.step("the message names the range", () => {
    const result = v.safeParse(schema, { ttl: 5 });
    assert.equal(result.success, false);
    assert.match(result.issues[0].message, /from 10 to 600/);
  });
});

Deno.test("realmSetting: null by default; 1 to 200 characters", () => {
  const schema = v.object({ realm: realmSetting });
  assert.deepEqual(v.parse(schema, {}), { realm: null });
  assert.deepEqual(v.parse(schema, { realm: "acme" }), { realm: "acme" });
  assert.equal(v.safeParse(schema, { realm: "" }).success, false);
  assert.equal(v.safeParse(schema, { realm: "x".repeat(201) }).success, false);
});

Deno.test("pluginRealm: the default for null, by id, else by name; an unknown one throws", async () => {
  const byId = { id: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", name: "acme" } as Realm;
  const fallback = { id: "0b5d3a1e-2c4f-4a6b-8d7e-9f0a1b2c3d4e", name: "main" } as Realm;
  const realms = {
    get: (id: string) => Promise.resolve(id === byId.id ? byId : null),
    getByName: (name: string) => Promise.resolve(name === byId.name ? byId : null),
    getDefault: () => Promise.resolve(fallback),
  };
  assert.equal(await pluginRealm(realms, null), fallback);
  assert.equal(await pluginRealm(realms, byId.id), byId);
  assert.equal(await pluginRealm(realms, "acme"), byId);
  await assert.rejects(pluginRealm(realms, "nowhere"), /realm "nowhere" does not exist/);
});
