/**
 * Federated identities: links from an external identity provider subject to a user.
 *
 * @module
 */

/** A stored link. */
export interface FederatedIdentityRecord {
  /** The id. */
  readonly id: string;
  /** The user it concerns. */
  readonly userId: string;
  /** The external identity provider's id. */
  readonly providerId: string;
  /** The subject at the provider (for example the OIDC `sub`). */
  readonly externalSubject: string;
  /** When it was created. */
  readonly createdAt: Date;
}

/** Federated-identity storage. */
export interface FederatedIdentityStore {
  /** Links; `ConflictError` when (provider, subject) is already linked (to anyone). */
  link(userId: string, providerId: string, externalSubject: string): Promise<FederatedIdentityRecord>;
  /** The link for an external subject, or null. */
  find(providerId: string, externalSubject: string): Promise<FederatedIdentityRecord | null>;
  /** The user's links, oldest first. */
  listByUser(userId: string): Promise<FederatedIdentityRecord[]>;
  /** Removes one link of the user; returns whether it applied. */
  unlink(userId: string, id: string): Promise<boolean>;
  /** Removes every link of the user (erasure); returns how many. */
  deleteAllForUser(userId: string): Promise<number>;
}
