/**
 * `framework-identity-v3` (verify-only) against ASP.NET Core Identity's own test table:
 * dotnet/aspnetcore `src/Identity/test/Identity.Test/PasswordHasherTest.cs` (V2 and V3
 * constants for "my password", and the `VerifyHashedPassword_FailureCases` payloads).
 */
import assert from "node:assert/strict";
import { fromBase64, toBase64 } from "../../../core/encoding.ts";
import { parseAspNetIdentityHash, verifyAspNetIdentity } from "../../../core/passwords/aspnet-identity.ts";
import { verifyPasswordHash } from "../../../core/passwords/registry.ts";

const PLAINTEXT = "my password";

const V2_SHA1_1000iter_128salt_256subkey =
  "AAABAgMEBQYHCAkKCwwNDg+ukCEMDf0yyQ29NYubggHIVY0sdEUfdyeM+E1LtH1uJg==";
const V3: Record<string, string> = {
  SHA1_250iter_128salt_128subkey: "AQAAAAAAAAD6AAAAEAhftMyfTJylOlZT+eEotFXd1elee8ih5WsjXaR3PA9M",
  SHA256_250000iter_256salt_256subkey:
    "AQAAAAEAA9CQAAAAIESkQuj2Du8Y+kbc5lcN/W/3NiAZFEm11P27nrSN5/tId+bR1SwV8CO1Jd72r4C08OLvplNlCDc3oQZ8efcW+jQ=",
  SHA512_50iter_128salt_128subkey: "AQAAAAIAAAAyAAAAEOMwvh3+FZxqkdMBz2ekgGhwQ4B6pZWND6zgESBuWiHw",
  SHA512_250iter_256salt_512subkey:
    "AQAAAAIAAAD6AAAAIJbVi5wbMR+htSfFp8fTw8N8GOS/Sje+S/4YZcgBfU7EQuqv4OkVYmc4VJl9AGZzmRTxSkP7LtVi9IWyUxX8IAAfZ8v+ZfhjCcudtC1YERSqE1OEdXLW9VukPuJWBBjLuw==",
  SHA512_10000iter_128salt_256subkey:
    "AQAAAAIAACcQAAAAEAABAgMEBQYHCAkKCwwNDg9B0Oxwty+PGIDSp95gcCfzeDvA4sGapUIUov8usXfD6A==",
  SHA512_100000iter_128salt_256subkey:
    "AQAAAAIAAYagAAAAEAABAgMEBQYHCAkKCwwNDg/Q8A0WMKbtHQJQ2DHCdoEeeFBrgNlldq6vH4qX/CGqGQ==",
};

Deno.test("framework-identity-v3: the V2 payload (marker 0x00) verifies", async () => {
  const parsed = parseAspNetIdentityHash(V2_SHA1_1000iter_128salt_256subkey);
  assert.deepEqual([parsed?.version, parsed?.prf, parsed?.iterations], [2, "SHA-1", 1000]);
  assert.equal(await verifyAspNetIdentity(PLAINTEXT, V2_SHA1_1000iter_128salt_256subkey), true);
});

Deno.test("framework-identity-v3: every V3 payload (SHA1/256/512 PRFs) verifies", async () => {
  const prfs: Record<string, string> = { SHA1: "SHA-1", SHA256: "SHA-256", SHA512: "SHA-512" };
  for (const [name, hash] of Object.entries(V3)) {
    const [prf, iter] = name.split("_");
    const parsed = parseAspNetIdentityHash(hash);
    assert.equal(parsed?.version, 3, name);
    assert.equal(parsed?.prf, prfs[prf], name);
    assert.equal(parsed?.iterations, Number(iter.replace("iter", "")), name);
    assert.equal(await verifyPasswordHash("framework-identity-v3", hash, PLAINTEXT), true, name);
  }
});

Deno.test("framework-identity-v3: VerifyHashedPassword_FailureCases of the original all fail", async () => {
  const failures: [string, string][] = [
    ["AAABAgMEBQYHCAkKCwwNDg+uAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAALtH1uJg==", "V2 incorrect password"],
    ["AAABAgMEBQYHCAkKCwwNDg+ukCEMDf0yyQ29NYubggE=", "V2 too short"],
    [
      "AAABAgMEBQYHCAkKCwwNDg+ukCEMDf0yyQ29NYubggHIVY0sdEUfdyeM+E1LtH1uJgAAAAAAAAAAAAA=",
      "V2 extra data at end",
    ],
    ["AQAAAAAAAAD6AAAAEAhftMyfTJyAAAAAAAAAAAAAAAAAAAih5WsjXaR3PA9M", "V3 incorrect password"],
    ["AQAAAAIAAAAyAAAAEOMwvh3+FZxqkdMBz2ekgGhwQ4A=", "V3 too short"],
    ["AQAAAAIAAAAyAAAAEOMwvh3+FZxqkdMBz2ekgGhwQ4B6pZWND6zgESBuWiHwAAAAAAAAAAAA", "V3 extra data at end"],
  ];
  for (const [hash, why] of failures) assert.equal(await verifyAspNetIdentity(PLAINTEXT, hash), false, why);
});

Deno.test("framework-identity-v3: further must-fail cases", async () => {
  const v3 = V3.SHA512_50iter_128salt_128subkey;
  const bytes = fromBase64(v3);
  const with_ = (edit: (b: Uint8Array) => void) => {
    const copy = bytes.slice();
    edit(copy);
    return toBase64(copy);
  };
  const cases: [string, string, string][] = [
    [v3, "my passworD", "wrong password"],
    [V2_SHA1_1000iter_128salt_256subkey, "my password ", "V2 wrong password"],
    [with_((b) => (b[0] = 0x02)), PLAINTEXT, "unknown marker 0x02"],
    [toBase64(Uint8Array.of(0xff, ...bytes.subarray(1))), PLAINTEXT, "unknown marker 0xff"],
    [with_((b) => (b[4] = 3)), PLAINTEXT, "unknown PRF 3"],
    [with_((b) => (b[8] = 0x33)), PLAINTEXT, "other iteration count"],
    [with_((b) => b.set([0, 0, 0, 0], 5)), PLAINTEXT, "zero iterations"],
    [with_((b) => (b[12] = 15)), PLAINTEXT, "salt shorter than 128 bits"],
    [with_((b) => (b[12] = 0xff)), PLAINTEXT, "salt length past the end"],
    [toBase64(bytes.subarray(0, 13 + 16 + 15)), PLAINTEXT, "subkey shorter than 128 bits"],
    [toBase64(bytes.subarray(0, 12)), PLAINTEXT, "truncated header"],
    [v3.slice(0, -1), PLAINTEXT, "truncated base64"],
    [v3 + "=", PLAINTEXT, "extra padding"],
    [" " + v3, PLAINTEXT, "whitespace"],
    [v3.replace("+", "-"), PLAINTEXT, "base64url alphabet"],
    ["", PLAINTEXT, "empty"],
    ["AA==", PLAINTEXT, "marker only"],
  ];
  for (const [hash, password, why] of cases) {
    assert.equal(await verifyAspNetIdentity(password, hash), false, why);
  }
});
