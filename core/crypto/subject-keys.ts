/**
 * Per-subject encryption (spec 2.9, 6): one AES-256-GCM key per subject, stored raw in the
 * subject-key store and created on first use. Deleting the subject's key row makes every
 * value encrypted under it unrecoverable (crypto-shredding on erasure).
 *
 * Sealed format: one version byte (1), the 12-byte IV, then the ciphertext with its 16-byte
 * tag. The subject id is bound as additional data, so a value sealed for one subject never
 * opens under another's key.
 *
 * @module
 */
import { utf8 } from "../encoding.ts";
import { SvcError } from "../errors.ts";
import type { RandomSource } from "../random.ts";
import type { SubjectKeyStore } from "../storage/subject-keys.ts";

const VERSION = 1;
const IV_LENGTH = 12;

/** The subject's key is gone (erased) or the sealed value is corrupt. Code `subject_data_unavailable`. */
export class SubjectDataUnavailableError extends SvcError {
  /** `message` says what is missing; the status is 410. */
  constructor(message: string) {
    super("subject_data_unavailable", message, 410);
  }
}

/**
 * Encrypts and decrypts data of one subject under its own key.
 *
 * @example
 * ```ts
 * import { createSqlStorage, cryptoRandom, openDatabase, SubjectCrypto, systemClock } from "@svc/svc";
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock: systemClock, random: cryptoRandom });
 * const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
 * const { id: userId } = await storage.users.create({ realmId: realm.id, email: "ada@example.com" });
 *
 * const crypto = new SubjectCrypto(storage.subjectKeys, cryptoRandom);
 * const sealed = await crypto.encrypt(userId, "+1 555 0100");
 * await crypto.decryptText(userId, sealed); // → "+1 555 0100"
 * await crypto.destroy(userId); // now decrypt throws SubjectDataUnavailableError
 * await database.close();
 * ```
 */
export class SubjectCrypto {
  readonly #store: SubjectKeyStore;
  readonly #random: RandomSource;

  /** Keys come from `store` (one per subject); `random` draws new keys and IVs. */
  constructor(store: SubjectKeyStore, random: RandomSource) {
    this.#store = store;
    this.#random = random;
  }

  /** Seals `plaintext` under the subject's key (created when the subject has none). */
  async encrypt(subjectId: string, plaintext: string | Uint8Array): Promise<Uint8Array> {
    const { key: record } = await this.#store.getOrCreate(subjectId, this.#random.bytes(32));
    const key = await importKey(record.key, ["encrypt"]);
    const iv = this.#random.bytes(IV_LENGTH);
    const data = typeof plaintext === "string" ? utf8(plaintext) : plaintext;
    const ciphertext = new Uint8Array(
      await crypto.subtle.encrypt(
        {
          name: "AES-GCM",
          iv: iv as Uint8Array<ArrayBuffer>,
          additionalData: utf8(subjectId) as Uint8Array<ArrayBuffer>,
        },
        key,
        data as Uint8Array<ArrayBuffer>,
      ),
    );
    const sealed = new Uint8Array(1 + IV_LENGTH + ciphertext.length);
    sealed[0] = VERSION;
    sealed.set(iv, 1);
    sealed.set(ciphertext, 1 + IV_LENGTH);
    return sealed;
  }

  /** Opens a value sealed for the subject; `SubjectDataUnavailableError` once the key is destroyed. */
  async decrypt(subjectId: string, sealed: Uint8Array): Promise<Uint8Array> {
    const record = await this.#store.get(subjectId);
    if (record === null) throw new SubjectDataUnavailableError("The subject's data was erased.");
    if (sealed.length < 1 + IV_LENGTH + 16 || sealed[0] !== VERSION) {
      throw new SubjectDataUnavailableError("The sealed value is not in a known format.");
    }
    const key = await importKey(record.key, ["decrypt"]);
    try {
      return new Uint8Array(
        await crypto.subtle.decrypt(
          {
            name: "AES-GCM",
            iv: sealed.slice(1, 1 + IV_LENGTH),
            additionalData: utf8(subjectId) as Uint8Array<ArrayBuffer>,
          },
          key,
          sealed.slice(1 + IV_LENGTH),
        ),
      );
    } catch {
      throw new SubjectDataUnavailableError("The sealed value does not open under the subject's key.");
    }
  }

  /** {@link decrypt} as UTF-8 text. */
  async decryptText(subjectId: string, sealed: Uint8Array): Promise<string> {
    return new TextDecoder().decode(await this.decrypt(subjectId, sealed));
  }

  /** Destroys the subject's key: everything sealed for the subject becomes unrecoverable. */
  async destroy(subjectId: string): Promise<boolean> {
    return await this.#store.delete(subjectId);
  }
}

function importKey(raw: Uint8Array, usages: KeyUsage[]): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", raw as Uint8Array<ArrayBuffer>, { name: "AES-GCM" }, false, usages);
}
