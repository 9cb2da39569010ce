/**
 * `bcrypt` (verify-only) against the test table of Openwall's crypt_blowfish 1.3,
 * `wrapper.c` `tests[]` (Solar Designer, public domain; https://www.openwall.com/crypt/,
 * github.com/openwall/crypt_blowfish). Keys are C strings: each `\xNN` is one byte.
 */
import assert from "node:assert/strict";
import { verifyBcrypt } from "../../../core/passwords/bcrypt.ts";
import { verifyPasswordHash } from "../../../core/passwords/registry.ts";

/** The bytes of a C string literal (one char per byte). */
const bytes = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

// [hash, key] rows of wrapper.c, in its order.
const OPENWALL: [string, string][] = [
  ["$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", "U*U"],
  ["$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK", "U*U*"],
  ["$2a$05$XXXXXXXXXXXXXXXXXXXXXOAcXxm9kjPGEMsLznoKqmqw7tc8WCx4a", "U*U*U"],
  [
    "$2a$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui",
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789chars after 72 are ignored",
  ],
  ["$2x$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e", "\xa3"],
  ["$2x$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e", "\xff\xff\xa3"],
  ["$2y$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e", "\xff\xff\xa3"],
  ["$2a$05$/OK.fbVrR/bpIqNJ5ianF.nqd1wy.pTMdcvrRWxyiGL2eMz.2a85.", "\xff\xff\xa3"],
  ["$2b$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e", "\xff\xff\xa3"],
  ["$2y$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq", "\xa3"],
  ["$2a$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq", "\xa3"],
  ["$2b$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq", "\xa3"],
  ["$2x$05$/OK.fbVrR/bpIqNJ5ianF.o./n25XVfn6oAPaUvHe.Csk4zRfsYPi", "1\xa3345"],
  ["$2x$05$/OK.fbVrR/bpIqNJ5ianF.o./n25XVfn6oAPaUvHe.Csk4zRfsYPi", "\xff\xa3345"],
  ["$2x$05$/OK.fbVrR/bpIqNJ5ianF.o./n25XVfn6oAPaUvHe.Csk4zRfsYPi", "\xff\xa334\xff\xff\xff\xa3345"],
  ["$2y$05$/OK.fbVrR/bpIqNJ5ianF.o./n25XVfn6oAPaUvHe.Csk4zRfsYPi", "\xff\xa334\xff\xff\xff\xa3345"],
  ["$2a$05$/OK.fbVrR/bpIqNJ5ianF.ZC1JEJ8Z4gPfpe1JOr/oyPXTWl9EFd.", "\xff\xa334\xff\xff\xff\xa3345"],
  ["$2y$05$/OK.fbVrR/bpIqNJ5ianF.nRht2l/HRhr6zmCp9vYUvvsqynflf9e", "\xff\xa3345"],
  ["$2a$05$/OK.fbVrR/bpIqNJ5ianF.nRht2l/HRhr6zmCp9vYUvvsqynflf9e", "\xff\xa3345"],
  ["$2a$05$/OK.fbVrR/bpIqNJ5ianF.6IflQkJytoRVc1yuaNtHfiuq.FRlSIS", "\xa3ab"],
  ["$2x$05$/OK.fbVrR/bpIqNJ5ianF.6IflQkJytoRVc1yuaNtHfiuq.FRlSIS", "\xa3ab"],
  ["$2y$05$/OK.fbVrR/bpIqNJ5ianF.6IflQkJytoRVc1yuaNtHfiuq.FRlSIS", "\xa3ab"],
  ["$2x$05$6bNw2HLQYeqHYyBfLMsv/OiwqTymGIGzFsA4hOTWebfehXHNprcAS", "\xd1\x91"],
  ["$2x$05$6bNw2HLQYeqHYyBfLMsv/O9LIGgn8OMzuDoHfof8AQimSGfcSWxnS", "\xd0\xc1\xd2\xcf\xcc\xd8"],
  [
    "$2a$05$/OK.fbVrR/bpIqNJ5ianF.swQOIzjOiJ9GHEPuhEkvqrUyvWhEMx6",
    "\xaa".repeat(72) + "chars after 72 are ignored as usual",
  ],
  ["$2a$05$/OK.fbVrR/bpIqNJ5ianF.R9xrDjiycxMbQE2bp.vgqlYpW5wx2yy", "\xaa\x55".repeat(36)],
  ["$2a$05$/OK.fbVrR/bpIqNJ5ianF.9tQZzcJfm3uj2NvJ/n5xkhpqLrMpWCe", "\x55\xaa\xff".repeat(24)],
  ["$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy", ""],
];

Deno.test("bcrypt: every $2a$/$2b$/$2y$ row of the Openwall table verifies", async () => {
  const rows = OPENWALL.filter(([hash]) => !hash.startsWith("$2x$"));
  assert.equal(rows.length, 20);
  for (const [hash, key] of rows) {
    assert.equal(await verifyBcrypt(bytes(key), hash), true, `${hash} / ${JSON.stringify(key)}`);
  }
});

Deno.test("bcrypt: $2x$ (the sign-extension bug variant) is never accepted, even with its right key", async () => {
  const rows = OPENWALL.filter(([hash]) => hash.startsWith("$2x$"));
  assert.equal(rows.length, 8);
  for (const [hash, key] of rows) assert.equal(await verifyBcrypt(bytes(key), hash), false, hash);
});

Deno.test("bcrypt: text passwords are UTF-8, and the registry dispatches on the tag", async () => {
  assert.equal(await verifyPasswordHash("bcrypt", OPENWALL[0][0], "U*U"), true);
  assert.equal(await verifyPasswordHash("bcrypt", OPENWALL[27][0], ""), true);
  // "\xa3" as text is U+00A3, whose UTF-8 is c2 a3: a different key from the byte a3.
  assert.equal(
    await verifyBcrypt("\xa3", "$2b$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq"),
    false,
  );
});

Deno.test("bcrypt: must-fail cases", async () => {
  const [hash, key] = OPENWALL[0];
  const cases: [string, string | Uint8Array, string][] = [
    [hash, "U*U*", "wrong password"],
    [hash, "U*", "prefix of the password"],
    [hash.slice(0, -1), key, "truncated by one character"],
    [hash.slice(0, 29), key, "setting only, no checksum"],
    [hash + "A", key, "trailing character"],
    [hash + "\n", key, "trailing newline"],
    [hash.replace("$2a$05$", "$2a$03$"), key, "cost below 4 (wrapper.c *0 row)"],
    [hash.replace("$2a$05$", "$2a$32$"), key, "cost above 31 (wrapper.c *0 row)"],
    [hash.replace("$2a$", "$2c$"), key, "unknown minor $2c$ (wrapper.c *0 row)"],
    [hash.replace("$2a$", "$2z$"), key, "unknown minor $2z$ (wrapper.c *0 row)"],
    [hash.replace("$2a$", "$2`$"), key, "unknown minor $2`$ (wrapper.c *0 row)"],
    [hash.replace("$2a$", "$2{$"), key, "unknown minor $2{$ (wrapper.c *0 row)"],
    [hash.replace("$2a$", "$2$"), key, "no minor"],
    [hash.replace(".E5Y", "!E5Y"), key, "character outside the bcrypt alphabet"],
    ["*0", key, "failure token"],
    ["", key, "empty hash"],
  ];
  for (const [h, k, why] of cases) assert.equal(await verifyBcrypt(k, h), false, why);
});

Deno.test("bcrypt: keys end at the first NUL and after 72 bytes, as crypt(3) sees them", async () => {
  assert.equal(await verifyBcrypt(bytes("U*U\x00anything"), OPENWALL[0][0]), true);
  const long = OPENWALL[3];
  assert.equal(await verifyBcrypt(long[1].slice(0, 72), long[0]), true);
  assert.equal(await verifyBcrypt(long[1].slice(0, 71), long[0]), false);
});
