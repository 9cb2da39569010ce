/**
 * A test {@link SecretCipher}: AES-256-GCM (WebCrypto) under each subject's key from the
 * subject-key store, created on first use, with the subject id bound as additional data.
 * Sealed format: 12-byte IV, then ciphertext and tag.
 */
import type { RandomSource } from "../../core/random.ts";
import type { SecretCipher } from "../../core/totp/service.ts";
import type { SubjectKeyStore } from "../../core/storage/subject-keys.ts";

/** A subject-key cipher for tests; `calls` counts encryptions and decryptions. */
export function testSecretCipher(
  keys: SubjectKeyStore,
  random: RandomSource,
): SecretCipher & { calls: { encrypt: number; decrypt: number } } {
  const calls = { encrypt: 0, decrypt: 0 };
  const keyOf = async (subjectId: string, create: boolean) => {
    const raw = create
      ? (await keys.getOrCreate(subjectId, random.bytes(32))).key.key
      : (await keys.get(subjectId))?.key;
    if (!raw) throw new Error("the subject has no key");
    return await crypto.subtle.importKey("raw", raw as Uint8Array<ArrayBuffer>, "AES-GCM", false, [
      "encrypt",
      "decrypt",
    ]);
  };
  const aad = (subjectId: string) => new TextEncoder().encode(subjectId);
  return {
    calls,
    async encrypt(subjectId, plaintext) {
      calls.encrypt++;
      const key = await keyOf(subjectId, true);
      const iv = random.bytes(12) as Uint8Array<ArrayBuffer>;
      const sealed = new Uint8Array(
        await crypto.subtle.encrypt(
          { name: "AES-GCM", iv, additionalData: aad(subjectId) },
          key,
          plaintext as Uint8Array<ArrayBuffer>,
        ),
      );
      const out = new Uint8Array(12 + sealed.length);
      out.set(iv);
      out.set(sealed, 12);
      return out;
    },
    async decrypt(subjectId, sealed) {
      calls.decrypt++;
      const key = await keyOf(subjectId, false);
      return new Uint8Array(
        await crypto.subtle.decrypt(
          { name: "AES-GCM", iv: sealed.slice(0, 12), additionalData: aad(subjectId) },
          key,
          sealed.slice(12),
        ),
      );
    },
  };
}
