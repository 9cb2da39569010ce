/**
 * Secrets of svc itself (not of a user or a realm): created once by whichever instance needs one
 * first, then read by every instance and every restart, so that what they derive agrees.
 *
 * @module
 */

/** Where server secrets live. */
export interface ServerSecretStore {
  /**
   * The secret named `name`. The first call anywhere stores `create()`; every call, concurrent
   * or later, on any instance, returns that first stored value.
   */
  getOrCreate(name: string, create: () => Uint8Array): Promise<Uint8Array>;
}
