/**
 * Replay protection for SAML assertions (spec 2.9, section 3): an assertion id is
 * marked once per connection, under the key `{connectionId}:{assertionId}`.
 */

/** Where marked SAML assertion ids live. */
export interface SamlAssertionStore {
  /**
   * Marks an assertion as used in one atomic statement. True the first time, false on every
   * repeat (concurrent or not) until the mark is pruned. `expiresAt` should be the assertion's
   * `NotOnOrAfter`, so a pruned id belongs to an assertion that is rejected anyway.
   */
  mark(connectionId: string, assertionId: string, expiresAt: Date): Promise<boolean>;
  /** Whether the assertion is currently marked. */
  isMarked(connectionId: string, assertionId: string): Promise<boolean>;
  /** Deletes marks with `expiresAt <= now` (default: the store's clock). Returns how many. */
  prune(now?: Date): Promise<number>;
}

/** The stored key of an assertion: `{connectionId}:{assertionId}`. */
export function samlAssertionKey(connectionId: string, assertionId: string): string {
  return `${connectionId}:${assertionId}`;
}
