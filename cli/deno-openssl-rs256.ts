/**
 * RS256 signatures on Deno with OpenSSL's libcrypto (3.x) through Deno's FFI: the
 * {@link JwsSigner} the Deno adapter gives the key ring.
 *
 * Deno's WebCrypto signs RSASSA-PKCS1-v1_5 with RustCrypto's `rsa`: about 1.8 CPU ms per
 * 2048-bit signature, against about 0.3 for OpenSSL (`bench/rs256_runtimes.mjs`), and svc signs
 * every access token, ID token and service-account token with it. PKCS#1 v1.5 signatures are
 * deterministic, so OpenSSL's are byte for byte WebCrypto's: svc's tokens do not change.
 *
 * - The library: `libcrypto.so.3`, else `libcrypto.so`, or on macOS `libcrypto.3.dylib` (never
 *   the system's unversioned LibreSSL one); a library without the OpenSSL 3 symbols, or below
 *   3.0, or no FFI permission (`--allow-ffi`): no signer, and jose signs with WebCrypto.
 * - Keys: each CryptoKey is exported once to PKCS#8 (svc's signing keys are extractable, see
 *   `core/keys/load.ts`), parsed into an `EVP_PKEY` (`d2i_PKCS8_PRIV_KEY_INFO`,
 *   `EVP_PKCS82PKEY`), the DER bytes zeroed right after; the `EVP_PKEY` is cached by CryptoKey
 *   and freed when the CryptoKey is collected. Before a key is used, OpenSSL's signature of a
 *   probe is compared with WebCrypto's: a difference turns the signer off for good.
 * - Signing: `EVP_DigestSignInit` with SHA-256 (PKCS#1 v1.5 padding, OpenSSL's default for RSA),
 *   then `EVP_DigestSign` as a nonblocking FFI call, on Deno's blocking thread pool, off the event
 *   loop; at most one call per core in flight, the others wait their turn. The buffers handed to
 *   OpenSSL are this module's and stay referenced until the call returns.
 *
 * @module
 */
import { type JwsSigner, lazyJwsSigner } from "../core/keys/jws.ts";

/** The libcrypto names tried, in order. */
const LIBRARY_NAMES: Record<string, readonly string[]> = {
  linux: ["libcrypto.so.3", "libcrypto.so"],
  darwin: [
    "libcrypto.3.dylib",
    "/opt/homebrew/opt/openssl@3/lib/libcrypto.3.dylib",
    "/usr/local/opt/openssl@3/lib/libcrypto.3.dylib",
  ],
};

const SYMBOLS = {
  OpenSSL_version_num: { parameters: [], result: "usize" },
  OpenSSL_version: { parameters: ["i32"], result: "pointer" },
  d2i_PKCS8_PRIV_KEY_INFO: { parameters: ["pointer", "buffer", "isize"], result: "pointer" },
  PKCS8_PRIV_KEY_INFO_free: { parameters: ["pointer"], result: "void" },
  EVP_PKCS82PKEY: { parameters: ["pointer"], result: "pointer" },
  EVP_PKEY_get_base_id: { parameters: ["pointer"], result: "i32" },
  EVP_PKEY_get_bits: { parameters: ["pointer"], result: "i32" },
  EVP_PKEY_get_size: { parameters: ["pointer"], result: "i32" },
  EVP_PKEY_free: { parameters: ["pointer"], result: "void" },
  EVP_sha256: { parameters: [], result: "pointer" },
  EVP_MD_CTX_new: { parameters: [], result: "pointer" },
  EVP_MD_CTX_free: { parameters: ["pointer"], result: "void" },
  EVP_DigestSignInit: {
    parameters: ["pointer", "pointer", "pointer", "pointer", "pointer"],
    result: "i32",
  },
  EVP_DigestSign: {
    parameters: ["pointer", "buffer", "buffer", "buffer", "usize"],
    result: "i32",
    nonblocking: true,
  },
  ERR_clear_error: { parameters: [], result: "void" },
} as const;

type Crypto = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

/** `EVP_PKEY_RSA` (`NID_rsaEncryption`). */
const EVP_PKEY_RSA = 6;
/** OpenSSL 3.0.0 in `OpenSSL_version_num()`'s form. */
const OPENSSL_3 = 0x30000000n;
/** What the per-key check signs with both OpenSSL and WebCrypto. */
const PROBE = new TextEncoder().encode("svc openssl rs256 probe");
const RS256 = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const;

/** A parsed key: its `EVP_PKEY` and signature length. */
interface NativeKey {
  readonly pkey: Deno.PointerObject;
  readonly size: number;
}

/** The options of {@link openSslRs256Signer}. */
export interface OpenSslSignerOptions {
  /** Library names or paths to try instead of the platform's defaults. */
  readonly libraries?: readonly string[];
  /** Most signatures computing at once (default: one per core). */
  readonly concurrency?: number;
}

/**
 * The signer the Deno adapter gives the key ring: {@link openSslRs256Signer}, made on the first
 * signature (`lazyJwsSigner`), so that a server that has signed nothing has not loaded libcrypto
 * (1.5 to 3 MiB of an idle server's RSS, docs/operations/memory.md). Null without the FFI
 * permission. `report` gets one line when the first signature has opened it, or found no OpenSSL
 * 3 libcrypto, in which case every signature goes to WebCrypto (jose), as with no signer.
 */
export function lazyOpenSslRs256Signer(
  options: OpenSslSignerOptions & { readonly report?: (line: string) => void } = {},
): JwsSigner | null {
  if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return null;
  return lazyJwsSigner(
    "OpenSSL's libcrypto 3 where it loads, opened on the first signature",
    () => openSslRs256Signer(options),
    (signer) =>
      options.report?.(
        signer === null
          ? "signing: no OpenSSL 3 libcrypto loads here; RS256 with WebCrypto"
          : `signing: RS256 with ${signer.name}, opened on the first signature`,
      ),
  );
}

/** The signer, or null where no OpenSSL 3 libcrypto loads (or FFI is not permitted). */
export function openSslRs256Signer(options: OpenSslSignerOptions = {}): JwsSigner | null {
  // Without FFI permission, Deno.dlopen would prompt on a terminal: ask nothing, sign with WebCrypto.
  if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return null;
  const opened = openLibcrypto(options.libraries ?? LIBRARY_NAMES[Deno.build.os] ?? []);
  if (opened === null) return null;
  const { crypto: c, version } = opened;
  const sha256 = c.EVP_sha256();
  if (sha256 === null) return null;
  const limit = Math.max(1, options.concurrency ?? navigator.hardwareConcurrency ?? 1);
  const keys = new WeakMap<CryptoKey, Promise<NativeKey | null>>();
  const freed = new FinalizationRegistry<Deno.PointerObject>((pkey) => c.EVP_PKEY_free(pkey));
  // What a nonblocking call reads or writes, referenced until it returns.
  const inFlight = new Set<object>();
  const waiting: (() => void)[] = [];
  let running = 0;
  let broken = false;

  async function signWith(key: NativeKey, input: Uint8Array, owner: CryptoKey): Promise<Uint8Array> {
    // A slot: a free one, else the one a finishing call hands over.
    if (running < limit) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    const ctx = c.EVP_MD_CTX_new();
    // Every buffer OpenSSL touches from its thread lives in an explicit ArrayBuffer: V8 may keep a
    // small typed array's bytes on its heap, where a collection could move them mid-call.
    const data = offHeap(input);
    const signature = new Uint8Array(new ArrayBuffer(key.size));
    const length = new BigUint64Array(new ArrayBuffer(8));
    length[0] = BigInt(signature.length);
    const held = { owner, data, signature, length };
    inFlight.add(held);
    try {
      if (ctx === null) throw new Error("openssl: EVP_MD_CTX_new failed");
      if (c.EVP_DigestSignInit(ctx, null, sha256, null, key.pkey) !== 1) {
        c.ERR_clear_error();
        throw new Error("openssl: EVP_DigestSignInit failed");
      }
      const ok = await c.EVP_DigestSign(ctx, signature, length, data, BigInt(data.length));
      if (ok !== 1) throw new Error("openssl: EVP_DigestSign failed");
      return signature.subarray(0, Number(length[0]));
    } finally {
      if (ctx !== null) c.EVP_MD_CTX_free(ctx);
      inFlight.delete(held);
      const next = waiting.shift();
      if (next === undefined) running--;
      else next();
    }
  }

  /** Parses `key` into an EVP_PKEY and checks it against WebCrypto; null when it cannot. */
  async function load(key: CryptoKey): Promise<NativeKey | null> {
    const algorithm = key.algorithm as Partial<RsaHashedKeyAlgorithm>;
    const exported = await crypto.subtle.exportKey("pkcs8", key);
    const der = new Uint8Array(exported);
    let pkey: Deno.PointerObject | null = null;
    try {
      // d2i_* read through a pointer to the data pointer (and advance it).
      const cursor = new BigUint64Array(new ArrayBuffer(8));
      cursor[0] = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(der)));
      const info = c.d2i_PKCS8_PRIV_KEY_INFO(null, cursor, BigInt(der.length));
      if (info !== null) {
        pkey = c.EVP_PKCS82PKEY(info);
        c.PKCS8_PRIV_KEY_INFO_free(info); // cleanses its copy of the key
      }
    } finally {
      der.fill(0);
    }
    if (pkey === null) {
      c.ERR_clear_error();
      return null;
    }
    const size = c.EVP_PKEY_get_size(pkey);
    if (
      c.EVP_PKEY_get_base_id(pkey) !== EVP_PKEY_RSA ||
      c.EVP_PKEY_get_bits(pkey) !== algorithm.modulusLength ||
      size * 8 !== algorithm.modulusLength
    ) {
      c.EVP_PKEY_free(pkey);
      return null;
    }
    const loaded: NativeKey = { pkey, size };
    freed.register(key, pkey);
    const [native, reference] = await Promise.all([
      signWith(loaded, PROBE, key),
      crypto.subtle.sign(RS256, key, PROBE).then((signature) => new Uint8Array(signature)),
    ]);
    if (native.length !== reference.length || native.some((byte, i) => byte !== reference[i])) broken = true;
    return loaded;
  }

  return {
    name: version,
    sign(alg, key, signingInput) {
      if (broken || alg !== "RS256" || !key.extractable || key.type !== "private") return null;
      if ((key.algorithm as Partial<RsaHashedKeyAlgorithm>).name !== RS256.name) return null;
      let entry = keys.get(key);
      if (entry === undefined) {
        entry = load(key).catch(() => null);
        keys.set(key, entry);
      }
      return entry.then((loaded) => loaded === null || broken ? null : signWith(loaded, signingInput, key));
    },
  };
}

/** A copy of `bytes` in an ArrayBuffer of its own (never on V8's heap). */
function offHeap(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(new ArrayBuffer(bytes.length));
  copy.set(bytes);
  return copy;
}

/** The first libcrypto of `names` that is OpenSSL 3 or later and has every symbol. */
function openLibcrypto(names: readonly string[]): { crypto: Crypto; version: string } | null {
  for (const name of names) {
    let library: Deno.DynamicLibrary<typeof SYMBOLS>;
    try {
      library = Deno.dlopen(name, SYMBOLS);
    } catch {
      continue; // absent, an older OpenSSL without the 3.0 names, or no --allow-ffi
    }
    const c = library.symbols;
    if (BigInt(c.OpenSSL_version_num()) < OPENSSL_3) {
      library.close();
      continue;
    }
    const text = c.OpenSSL_version(0);
    const version = text === null ? "openssl" : Deno.UnsafePointerView.getCString(text).split(" ").slice(0, 2)
      .join(" ").toLowerCase();
    return { crypto: c, version };
  }
  return null;
}
