/**
 * Decoy credentials for username-first passkey logins (issue 19 item 7): an unknown address, or a
 * user without passkeys, gets an `allowCredentials` list shaped like a real user's, so the answer
 * does not tell who has passkeys.
 *
 * A real list holds the user's passkeys (usually one, sometimes two or three), each with the id
 * length and transports of the authenticator that made it. The decoy draws the number of entries
 * and, for each, an authenticator profile from fixed weights modelled on the authenticators
 * passkeys come from; the id bytes are pseudorandom. Everything is derived by HMAC-SHA256 from a
 * server secret and the realm and normalised address, so the same address always gets the same
 * decoy, on every instance sharing the secret and after every restart, and nobody without the
 * secret can tell a decoy id from a real one.
 *
 * @module
 */
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { toBase64Url, utf8 } from "../encoding.ts";

/** An authenticator a decoy entry imitates: its credential id length and reported transports. */
export interface DecoyProfile {
  /** Credential id length in bytes. */
  readonly idBytes: number;
  /** Transports as browsers report them (`getTransports()`: sorted, unique). */
  readonly transports: readonly string[];
  /** Relative weight of the profile. */
  readonly weight: number;
  /** What it imitates. */
  readonly source: string;
}

/**
 * The profiles: id lengths and transports of the discoverable credentials (passkeys) made by
 * common authenticators. svc requires resident keys, so only those count.
 */
export const DECOY_PROFILES: readonly DecoyProfile[] = Object.freeze([
  {
    idBytes: 32,
    transports: ["internal"],
    weight: 35,
    source: "Chromium platform and virtual (CDP) authenticators, Windows Hello",
  },
  { idBytes: 20, transports: ["hybrid", "internal"], weight: 30, source: "iCloud Keychain" },
  { idBytes: 16, transports: ["hybrid", "internal"], weight: 25, source: "Google Password Manager" },
  { idBytes: 64, transports: ["nfc", "usb"], weight: 10, source: "FIDO2 security keys" },
]);

/** Relative weights of one, two and three passkeys per user. */
export const DECOY_COUNT_WEIGHTS: readonly { readonly count: number; readonly weight: number }[] = Object
  .freeze([
    { count: 1, weight: 80 },
    { count: 2, weight: 15 },
    { count: 3, weight: 5 },
  ]);

/** One `allowCredentials` entry. */
export interface AllowedCredential {
  /** base64url, no padding. */
  readonly id: string;
  readonly transports: string[];
}

/**
 * The decoy `allowCredentials` list of `email` (normalised by the caller) in `realmId`, derived
 * from `secret` (at least 32 bytes).
 */
export function decoyCredentials(
  secret: Uint8Array,
  realmId: string | null,
  email: string,
): AllowedCredential[] {
  const stream = new DecoyStream(secret, `${realmId ?? ""}\n${email}`);
  const count = pick(DECOY_COUNT_WEIGHTS, stream.uint32()).count;
  const list: AllowedCredential[] = [];
  for (let i = 0; i < count; i++) {
    const profile = pick(DECOY_PROFILES, stream.uint32());
    list.push({ id: toBase64Url(stream.bytes(profile.idBytes)), transports: [...profile.transports] });
  }
  return list;
}

function pick<T extends { weight: number }>(choices: readonly T[], value: number): T {
  const total = choices.reduce((sum, c) => sum + c.weight, 0);
  // 2^32 values over a total of 100: the bias is below 1e-7.
  let point = value % total;
  for (const choice of choices) {
    if (point < choice.weight) return choice;
    point -= choice.weight;
  }
  return choices[choices.length - 1];
}

/** HMAC-SHA256 in counter mode: block i is HMAC(secret, label ‖ 0x00 ‖ i). */
class DecoyStream {
  readonly #secret: Uint8Array;
  readonly #label: Uint8Array;
  #block = 0;
  #buffer = new Uint8Array(0);

  constructor(secret: Uint8Array, label: string) {
    this.#secret = secret;
    this.#label = utf8(`svc passkey decoy v1\n${label}`);
  }

  bytes(n: number): Uint8Array {
    while (this.#buffer.length < n) {
      const input = new Uint8Array(this.#label.length + 5);
      input.set(this.#label);
      new DataView(input.buffer).setUint32(this.#label.length + 1, this.#block++);
      const next = new Uint8Array(this.#buffer.length + 32);
      next.set(this.#buffer);
      next.set(hmac(sha256, this.#secret, input), this.#buffer.length);
      this.#buffer = next;
    }
    const out = this.#buffer.slice(0, n);
    this.#buffer = this.#buffer.slice(n);
    return out;
  }

  uint32(): number {
    return new DataView(this.bytes(4).buffer).getUint32(0);
  }
}
