/**
 * One argon2id hash at svc's default cost (64 MiB, t=3, p=1) on every backend this runtime has,
 * in the same run, interleaved round by round (so load from other processes hits every backend
 * alike), medians; each backend's ratio to the fastest native one (or to the fastest overall where
 * the runtime has no native argon2id). Runs on all three runtimes:
 *
 *     deno run -A bench/password_backends.ts [--rounds 9]
 *     bun bench/password_backends.ts [--rounds 9]
 *     node --import tsx bench/password_backends.ts [--rounds 9]
 *
 * Backends: the WebAssembly SIMD build (svc's portable backend), hash-wasm's build (the fallback
 * where WebAssembly SIMD is missing), `node:crypto`'s `argon2` where it exists (Node 24.7+, Bun),
 * the `@node-rs/argon2` Node-API addon (svc's default wherever it loads), and
 * `Bun.password` (argon2id, the same cost, its own salt) on Bun. Every backend's output is checked
 * against the others before timing.
 *
 * @module
 */
import process from "node:process";
import { DEFAULT_ARGON2ID_PARAMS as params } from "../core/passwords/argon2-params.ts";
import { type Argon2idRawFunction, simdArgon2idRaw } from "../core/passwords/argon2-simd.ts";
import { hashWasmArgon2idRaw } from "../core/passwords/argon2id-hash-wasm.ts";
import { napiArgon2idRaw, nodeCryptoArgon2idRaw } from "../cli/native-argon2.ts";

const args = process.argv.slice(2);
const roundsAt = args.indexOf("--rounds");
const ROUNDS = roundsAt >= 0 ? Number(args[roundsAt + 1]) : 9;
const versions = process.versions as Record<string, string | undefined>;
const runtime = versions.deno
  ? `Deno ${versions.deno}`
  : versions.bun
  ? `Bun ${versions.bun}`
  : `Node ${process.version}`;

const password = new TextEncoder().encode("correct horse battery staple");
const salt = crypto.getRandomValues(new Uint8Array(16));

interface Backend {
  readonly name: string;
  readonly native: boolean;
  readonly run: () => Promise<unknown>;
}
const raw = (name: string, native: boolean, f: Argon2idRawFunction): Backend => ({
  name,
  native,
  run: () => f(password, params, salt, 32),
});
const backends: Backend[] = [
  raw("wasm-simd (@phi-ag/argon2 build, portable)", false, simdArgon2idRaw),
  raw("hash-wasm (no SIMD, previous default)", false, hashWasmArgon2idRaw),
];
const nodeCrypto = nodeCryptoArgon2idRaw();
if (nodeCrypto) backends.push(raw("node:crypto argon2 (native)", true, nodeCrypto));
const napi = napiArgon2idRaw();
if (napi) backends.push(raw("@node-rs/argon2 (Node-API addon, native)", true, napi));
const bun = (globalThis as {
  Bun?: {
    password: {
      hash(p: string, o: { algorithm: string; memoryCost: number; timeCost: number }): Promise<string>;
    };
  };
}).Bun;
if (bun) {
  backends.push({
    name: "Bun.password (native)",
    native: true,
    run: () =>
      bun.password.hash("correct horse battery staple", {
        algorithm: "argon2id",
        memoryCost: params.memoryKiB,
        timeCost: params.iterations,
      }),
  });
}

// The raw backends agree before anything is timed.
const outputs = await Promise.all(
  [simdArgon2idRaw, hashWasmArgon2idRaw, ...(nodeCrypto ? [nodeCrypto] : []), ...(napi ? [napi] : [])].map((
    f,
  ) => f(password, params, salt, 32)),
);
for (const out of outputs) {
  if (out.join() !== outputs[0].join()) throw new Error("the backends disagree");
}

const times = new Map<string, number[]>(backends.map((b) => [b.name, []]));
for (const backend of backends) await backend.run(); // warm-up: compile, first memory growth
for (let round = 0; round < ROUNDS; round++) {
  // Rotate the order each round, so no backend is always first after a pause.
  for (let i = 0; i < backends.length; i++) {
    const backend = backends[(round + i) % backends.length];
    const start = performance.now();
    await backend.run();
    times.get(backend.name)!.push(performance.now() - start);
  }
}
const median = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const medians = backends.map((b) => ({ ...b, ms: median(times.get(b.name)!) }));
const natives = medians.filter((b) => b.native);
const reference = (natives.length > 0 ? natives : medians).reduce((a, b) => (b.ms < a.ms ? b : a));
let load = "";
try {
  const os = await import("node:os");
  load = `; load average ${os.loadavg().map((n) => n.toFixed(2)).join(" ")}`;
} catch {
  // no load average here
}
console.log(
  `${runtime}; argon2id m=${params.memoryKiB} KiB t=${params.iterations} p=${params.parallelism}; ${ROUNDS} interleaved rounds, medians${load}`,
);
console.log("");
console.log(
  `| backend | median ms | ÷ ${reference.native ? "fastest native" : "fastest (no native here)"} |`,
);
console.log("| --- | ---: | ---: |");
for (const b of medians) {
  console.log(`| ${b.name} | ${b.ms.toFixed(1)} | ${(b.ms / reference.ms).toFixed(2)}× |`);
}
