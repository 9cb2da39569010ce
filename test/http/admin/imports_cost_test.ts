/**
 * Cost ceilings through the real routes: an Auth0 export with a `$2b$31$` hash (about 33 hours
 * of one core per verification) imports the user without that hash (an `Error` issue, the other
 * lines go on), and a login as that user, even with a hash planted by hand, answers at once what
 * a wrong password answers: the hasher never sees the hash, only the dummy argon2id verification.
 */
import assert from "node:assert/strict";
import { InThreadPasswordHasher, type PasswordHasher } from "../../../core/passwords/hasher.ts";
import { adminBed } from "../../support/admin.ts";

const COST_31 = "$2b$31$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
const COST_04 = "$2b$04$.umPE/6kJRO5OijOTz3jZ.2i.MFCC9fOp99JjWjYp9calWRLIJAvm";

/** An in-thread hasher recording the tag and hash of every verification. */
function recordingHasher() {
  const inner = new InThreadPasswordHasher();
  const verified: { tag: string; hash: string }[] = [];
  const hasher: PasswordHasher = {
    kind: "in-thread",
    hashArgon2id: (p, params, salt) => inner.hashArgon2id(p, params, salt),
    verify(tag, hash, password) {
      verified.push({ tag, hash });
      return inner.verify(tag, hash, password);
    },
    close: () => inner.close(),
  };
  return { hasher, verified };
}

Deno.test("imports over HTTP: a $2b$31$ hash is refused at import and costs a login nothing", async () => {
  const { hasher, verified } = recordingHasher();
  const bed = await adminBed({}, { hasher });
  const storage = bed.bed.storage;
  const login = async (email: string, password: string) => {
    const res = await bed.bed.post("/auth/login", { email, password });
    const body = await res.json();
    delete body.error?.requestId;
    return { status: res.status, body };
  };
  try {
    const ndjson = [
      { email: "slow@example.test", email_verified: true, passwordHash: COST_31 },
      {
        email: "bo@example.test",
        email_verified: true,
        custom_password_hash: { algorithm: "bcrypt", hash: { value: COST_04 } },
      },
    ].map((line) => JSON.stringify(line)).join("\n");
    const res = await bed.request("POST", "/svc-admin/imports/auth0", {
      body: ndjson,
      headers: { "Content-Type": "application/x-ndjson" },
    });
    assert.equal(res.status, 200);
    const report = await res.json();
    assert.deepEqual(report.credentials, { created: 1, updated: 0, skipped: 1, total: 2 });
    const issue = report.issues.find((i: { entity: string }) => i.entity === "Credential");
    assert.equal(issue.severity, "Error");
    assert.equal(issue.key, "slow@example.test");
    assert.match(issue.message, /bcrypt cost 31 .*SVC_PASSWORD_MAX_BCRYPT_COST/);
    const slow = (await storage.users.findByEmail(bed.realmId, "slow@example.test"))!;
    assert.equal(await storage.passwordCredentials.get(slow.id), null, "the hash was not stored");
    assert.equal((await login("bo@example.test", "bo password")).status, 200, "the other line imported");

    // A hash that got in some other way (an older svc, a restored dump) is never verified either.
    await storage.passwordCredentials.upsert(slow.id, { algorithm: "bcrypt", hash: COST_31 });
    const wrongPassword = await login("bo@example.test", "not bo's password");
    verified.length = 0;
    const costly = await login("slow@example.test", "U*U");
    assert.deepEqual(costly, wrongPassword, "the wrong-password answer");
    assert.equal(costly.status, 401);
    assert.equal(verified.length, 1);
    assert.equal(verified[0].tag, "argon2id", "only the dummy verification ran");
    assert.ok(!verified.some((v) => v.hash === COST_31), "the hasher never saw the cost-31 hash");
  } finally {
    await bed.close();
  }
});
