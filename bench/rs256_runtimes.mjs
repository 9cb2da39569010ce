/**
 * What one JWT signature costs on each runtime svc runs on: RS256 (RSA 2048, svc's signing key
 * and the algorithm OIDC certification requires), ES256 and EdDSA, through WebCrypto (what jose,
 * and so svc, uses on every runtime), single-threaded, sequential. Plain JavaScript so the same
 * file runs everywhere:
 *
 *   npx deno run -A bench/rs256_runtimes.mjs
 *   node bench/rs256_runtimes.mjs
 *   npx bun bench/rs256_runtimes.mjs
 *
 * On Deno a fourth row measures svc's RS256 signer there, OpenSSL's libcrypto through FFI
 * (`cli/deno-openssl-rs256.ts`, what `SVC_RSA_NATIVE_SIGNER` turns on), where it loads.
 *
 * `--signs 2000` sets the signatures per algorithm (after 200 warm-up signatures). Prints one
 * Markdown row per algorithm: the runtime, the wall time per signature (mean, and the median of 10
 * batches), signatures per second from that median, and the process CPU time per signature (user +
 * system, all threads: Deno signs on a blocking thread, so on a loaded machine its wall time grows
 * far more than its CPU time).
 */
import process from "node:process";
const argv = typeof Deno !== "undefined" ? Deno.args : process.argv.slice(2);
const at = argv.indexOf("--signs");
const SIGNS = at >= 0 ? Number(argv[at + 1]) : 2000;
const runtime = typeof Deno !== "undefined"
  ? `Deno ${Deno.version.deno}`
  : typeof Bun !== "undefined"
  ? `Bun ${Bun.version}`
  : `Node ${process.version}`;

const subtle = globalThis.crypto.subtle;
const payload = new TextEncoder().encode(
  "eyJhbGciOiJSUzI1NiIsInR5cCI6ImF0K3N2YyIsImtpZCI6ImsxIn0." +
    "eyJpc3MiOiJodHRwczovL2lkLmV4YW1wbGUuY29tIiwic3ViIjoiMDAwMDAwMDAtMDAwMC00MDAwLTgwMDAtMDAwMDAwMDAwMDAwIiwi" +
    "YXVkIjoiYXBwIiwiaWF0IjoxNzAwMDAwMDAwLCJleHAiOjE3MDAwMDA2MDAsImp0aSI6IngifQ",
);

const algorithms = [
  {
    name: "RS256 (RSA 2048)",
    generate: {
      name: "RSASSA-PKCS1-v1_5",
      hash: "SHA-256",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
    },
    sign: { name: "RSASSA-PKCS1-v1_5" },
  },
  {
    name: "ES256 (P-256)",
    generate: { name: "ECDSA", namedCurve: "P-256" },
    sign: { name: "ECDSA", hash: "SHA-256" },
  },
  { name: "EdDSA (Ed25519)", generate: { name: "Ed25519" }, sign: { name: "Ed25519" } },
];
if (typeof Deno !== "undefined") {
  const { openSslRs256Signer } = await import("../cli/deno-openssl-rs256.ts");
  const openssl = openSslRs256Signer();
  if (openssl !== null) {
    algorithms.push({
      ...algorithms[0],
      name: `RS256 (RSA 2048), ${openssl.name} via FFI`,
      extractable: true, // the signer exports the key once, to PKCS#8
      signWith: (key, data) => openssl.sign("RS256", key, data),
    });
  }
}

console.log(
  "| runtime | algorithm | mean ms/signature | median of 10 batches | signatures/s | CPU ms/signature |",
);
console.log("| --- | --- | --- | --- | --- | --- |");
for (const algorithm of algorithms) {
  let key;
  try {
    key = (await subtle.generateKey(algorithm.generate, algorithm.extractable ?? false, ["sign", "verify"]))
      .privateKey;
  } catch (error) {
    console.log(`| ${runtime} | ${algorithm.name} | not supported (${String(error).slice(0, 60)}) | | | |`);
    continue;
  }
  const sign = algorithm.signWith ?? ((key, data) => subtle.sign(algorithm.sign, key, data));
  for (let i = 0; i < 200; i++) await sign(key, payload);
  const batch = Math.max(1, Math.floor(SIGNS / 10));
  const batches = [];
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (let b = 0; b < 10; b++) {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) await sign(key, payload);
    batches.push((performance.now() - t0) / batch);
  }
  const mean = (performance.now() - started) / (batch * 10);
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000 / (batch * 10);
  batches.sort((a, b) => a - b);
  const median = (batches[4] + batches[5]) / 2;
  console.log(
    `| ${runtime} | ${algorithm.name} | ${mean.toFixed(3)} | ${median.toFixed(3)} | ${
      (1000 / median).toFixed(0)
    } | ${cpuMs.toFixed(3)} |`,
  );
}
