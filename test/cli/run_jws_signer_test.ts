/**
 * `svc start` asks the runtime adapter for its RS256 signer unless `SVC_RSA_NATIVE_SIGNER=false`,
 * says so at boot, and the tokens it mints go through it (and verify on svc's own JWKS).
 */
import { strict as assert } from "node:assert";
import { createLocalJWKSet, jwtVerify } from "jose";
import { runCli, type RuntimeAdapter } from "../../cli/run.ts";
import type { JwsSigner } from "../../core/keys/jws.ts";
import { FAST_PASSWORD_ENV } from "../support/login.ts";

/** Boots `svc start` with `env`, signs the bootstrap administrator in, stops. */
async function boot(env: Record<string, string>) {
  const dataDir = await Deno.makeTempDir({ prefix: "svc-jws-signer-" });
  const counts = { created: 0, signed: 0 };
  // A stand-in for the Deno adapter's OpenSSL signer: WebCrypto, counted.
  const signer: JwsSigner = {
    name: "counting webcrypto",
    sign: async (_alg, key, input) => {
      const signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, input as Uint8Array<ArrayBuffer>);
      counts.signed++;
      return new Uint8Array(signature);
    },
  };
  let fetchHandler!: (req: Request) => Response | Promise<Response>;
  let shutdown!: () => Promise<void>;
  const printed: string[] = [];
  const listening = Promise.withResolvers<void>();
  const runtime: RuntimeAdapter = {
    name: "deno",
    env: () => ({
      ...FAST_PASSWORD_ENV,
      SVC_DATA_DIR: `${dataDir}/data`,
      SVC_PORT: "0",
      SVC_BOOTSTRAP_ADMIN_EMAIL: "root@example.test",
      SVC_BOOTSTRAP_ADMIN_PASSWORD: "bootstrap secret",
      ...env,
    }),
    readTextFile: (path) => Deno.readTextFile(path),
    serve: (fetch) => {
      fetchHandler = fetch;
      return Promise.resolve({ port: 41_001, close: () => Promise.resolve() });
    },
    onShutdown: (handler) => shutdown = handler,
    createJwsSigner: () => {
      counts.created++;
      return signer;
    },
    print: (line) => {
      printed.push(line);
      if (line.startsWith("svc listening")) listening.resolve();
    },
    printError: (line) => printed.push(`stderr: ${line}`),
  };
  const exit = runCli(["start"], runtime);
  await Promise.race([listening.promise, exit.then(() => assert.fail(printed.join("\n")))]);
  try {
    const login = await fetchHandler(
      new Request("http://127.0.0.1:41001/auth/login", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email: "root@example.test", password: "bootstrap secret" }),
      }),
    );
    assert.equal(login.status, 200, printed.join("\n"));
    const { accessToken } = await login.json();
    const jwks = await (await fetchHandler(new Request("http://127.0.0.1:41001/.well-known/jwks.json")))
      .json();
    await jwtVerify(accessToken, createLocalJWKSet(jwks));
    return { counts, printed };
  } finally {
    await shutdown();
    assert.equal(await exit, 0, printed.join("\n"));
    await Deno.remove(dataDir, { recursive: true });
  }
}

Deno.test("svc start signs with the runtime's RS256 signer, unless SVC_RSA_NATIVE_SIGNER=false", async (t) => {
  await t.step("default: asked for, named at boot, and the access token is its signature", async () => {
    const { counts, printed } = await boot({});
    assert.equal(counts.created, 1);
    assert.ok(counts.signed >= 1, "the login's access token went through the signer");
    assert.ok(
      printed.includes("signing: RS256 with counting webcrypto (SVC_RSA_NATIVE_SIGNER)"),
      printed.join("\n"),
    );
  });

  await t.step("SVC_RSA_NATIVE_SIGNER=false: never asked for, jose signs", async () => {
    const { counts, printed } = await boot({ SVC_RSA_NATIVE_SIGNER: "false" });
    assert.equal(counts.created, 0);
    assert.equal(counts.signed, 0);
    assert.ok(!printed.some((line) => line.startsWith("signing:")), printed.join("\n"));
  });
});
