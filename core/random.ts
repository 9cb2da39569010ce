/**
 * A source of randomness. Secrets, ids and challenges are drawn from it so that
 * tests can make them deterministic.
 */
export interface RandomSource {
  /** Returns `length` random bytes. */
  bytes(length: number): Uint8Array;
}

/** Requests of at most this many bytes are served from {@link pool}. */
const POOLED_MAX = 256;
/**
 * Random bytes drawn ahead, 4 KiB at a time: a request (ids, tokens, salts: 16 to 64 bytes,
 * several per HTTP request) copies the next unused bytes out instead of calling
 * `getRandomValues` (a call into the runtime, and on Node into OpenSSL, each time). Every byte
 * is handed out once and zeroed in the pool as it is; the next refill draws new ones. Node's own
 * `crypto.randomUUID` draws ahead the same way.
 */
const pool = new Uint8Array(4096);
let poolOffset = pool.length;

/** Cryptographically secure randomness from WebCrypto. */
export const cryptoRandom: RandomSource = {
  bytes(length: number): Uint8Array {
    if (length <= POOLED_MAX) {
      if (poolOffset + length > pool.length) {
        crypto.getRandomValues(pool);
        poolOffset = 0;
      }
      const out = pool.slice(poolOffset, poolOffset + length);
      // What was handed out (a secret, perhaps) does not stay behind in the pool.
      pool.fill(0, poolOffset, poolOffset + length);
      poolOffset += length;
      return out;
    }
    const out = new Uint8Array(length);
    // getRandomValues is limited to 65536 bytes per call.
    for (let offset = 0; offset < length; offset += 65536) {
      crypto.getRandomValues(out.subarray(offset, Math.min(length, offset + 65536)));
    }
    return out;
  },
};

/**
 * A deterministic, NOT secure source for tests: a xorshift128+ stream from a seed.
 */
export function seededRandom(seed: number): RandomSource {
  let s0 = (seed >>> 0) || 0x9e3779b9;
  let s1 = ((seed * 2654435761) >>> 0) || 0x85ebca6b;
  return {
    bytes(length: number): Uint8Array {
      const out = new Uint8Array(length);
      for (let i = 0; i < length; i++) {
        let x = s0;
        const y = s1;
        s0 = y;
        x ^= x << 23;
        x ^= x >>> 17;
        x ^= y ^ (y >>> 26);
        s1 = x >>> 0;
        out[i] = (s0 + s1) & 0xff;
      }
      return out;
    },
  };
}

/** Each byte's two lower-case hex digits. */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** A random RFC 4122 version-4 UUID drawn from `random`. */
export function randomUuid(random: RandomSource): string {
  const b = random.bytes(16);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  let h = "";
  for (let i = 0; i < 16; i++) h += HEX[b[i]];
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A random URL-safe token of `byteLength` random bytes (base64url, no padding). */
export function randomToken(random: RandomSource, byteLength = 32): string {
  return base64UrlOf(random.bytes(byteLength));
}

function base64UrlOf(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
