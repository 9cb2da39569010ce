import { strict as assert } from "node:assert";
import { InThreadPasswordHasher, type PasswordHasher } from "../../../core/passwords/hasher.ts";
import { loginBed } from "../../support/login.ts";

/** An in-thread hasher that counts the password verifications it runs. */
class CountingHasher implements PasswordHasher {
  readonly kind = "in-thread" as const;
  readonly #inner = new InThreadPasswordHasher();
  verifications = 0;

  hashArgon2id(...args: Parameters<PasswordHasher["hashArgon2id"]>): Promise<string> {
    return this.#inner.hashArgon2id(...args);
  }

  verify(tag: string, hash: string, password: string): Promise<boolean> {
    this.verifications++;
    return this.#inner.verify(tag, hash, password);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

const settle = <T>(work: Promise<T>) => work.then((value) => ({ value }), (error) => ({ error }));

Deno.test("login lockout (postgres): a race of wrong guesses runs at most the limit of password checks", async () => {
  const hasher = new CountingHasher();
  const bed = await loginBed({ SVC_ABUSE_PER_IP_LIMIT: "1000" }, { postgres: true, hasher });
  try {
    await bed.user("victim@example.test", "the right password");
    await bed.user("bystander@example.test", "another password");
    const before = hasher.verifications;
    // 50 wrong guesses released together: 10 each from 5 addresses (the per-IP-and-account limit).
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        settle(bed.login.pipeline.login({
          email: "victim@example.test",
          password: `guess ${i}`,
          ip: `198.51.100.${1 + (i % 5)}`,
        }))),
    );
    const codes = outcomes.map((o) => "error" in o ? (o.error as { code?: string }).code : "signed_in");
    assert.equal(codes.filter((c) => c === "invalid_credentials").length, 5, codes.join(","));
    assert.equal(codes.filter((c) => c === "login_blocked").length, 45);
    assert.equal(hasher.verifications - before, 5, "at most the lockout limit of password checks ran");

    // Within the window the right password is refused too, before any password work.
    const right = await settle(bed.login.pipeline.login({
      email: "victim@example.test",
      password: "the right password",
      ip: "203.0.113.99",
    }));
    assert.equal("error" in right && (right.error as { code?: string }).code, "login_blocked");
    assert.equal(hasher.verifications - before, 5);

    // Another account is not affected; after the window the right password works.
    const other = await bed.login.pipeline.login({
      email: "bystander@example.test",
      password: "another password",
      ip: "198.51.100.1",
    });
    assert.equal(other.kind, "signIn");
    bed.clock.advance(15 * 60_000);
    const later = await bed.login.pipeline.login({
      email: "victim@example.test",
      password: "the right password",
      ip: "203.0.113.99",
    });
    assert.equal(later.kind, "signIn");
  } finally {
    await bed.close();
  }
});

Deno.test("login lockout (postgres): the per-IP-and-account layer holds under a race", async () => {
  const hasher = new CountingHasher();
  const bed = await loginBed({
    SVC_ABUSE_PER_IP_LIMIT: "1000",
    SVC_ABUSE_ACCOUNT_LOCKOUT_LIMIT: "1000",
  }, { postgres: true, hasher });
  try {
    await bed.user("target@example.test", "the right password");
    const before = hasher.verifications;
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        settle(bed.login.pipeline.login({
          email: "target@example.test",
          password: `guess ${i}`,
          ip: "198.51.100.77",
        }))),
    );
    const blocked = outcomes.filter((o) =>
      "error" in o && (o.error as { code?: string }).code === "login_blocked"
    );
    assert.equal(blocked.length, 30);
    assert.equal(
      hasher.verifications - before,
      10,
      "at most the per-IP-and-account limit of password checks",
    );
  } finally {
    await bed.close();
  }
});

Deno.test("login lockout: a right password gives its reservation back; failures and org refusals stay counted", async () => {
  const bed = await loginBed({ SVC_ABUSE_PER_IP_LIMIT: "1000" });
  try {
    await bed.user("pat@example.test", "pat's password");
    const attempt = (password: string) =>
      settle(bed.login.pipeline.login({ email: "pat@example.test", password, ip: "198.51.100.5" }));
    for (let i = 0; i < 3; i++) {
      const wrong = await attempt("wrong");
      assert.equal("error" in wrong && (wrong.error as { code?: string }).code, "invalid_credentials");
    }
    // A right password is no failure.
    for (let i = 0; i < 3; i++) {
      const right = await attempt("pat's password");
      assert.ok("value" in right && right.value.kind === "signIn");
    }
    // An org refusal keeps its slot (issue 25): it counts as a failure.
    const org = await bed.storage.organizations.create({ realmId: bed.realmId, name: "o", displayName: "O" });
    const foreign = await settle(bed.login.pipeline.login({
      email: "pat@example.test",
      password: "pat's password",
      org: org.id,
      ip: "198.51.100.5",
    }));
    assert.equal("error" in foreign && (foreign.error as { code?: string }).code, "forbidden");
    const fifth = await attempt("wrong");
    assert.equal("error" in fifth && (fifth.error as { code?: string }).code, "invalid_credentials");
    const sixth = await attempt("pat's password");
    assert.equal("error" in sixth && (sixth.error as { code?: string }).code, "login_blocked");
  } finally {
    await bed.close();
  }
});
