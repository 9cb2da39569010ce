/**
 * Policies: grants attached directly to a user or a group, at realm level or in one
 * organization. Unknown-id and conflict conventions: see `realms.ts`.
 *
 * @module
 */
import type { Grant, GrantEffect, GrantInput, ListPage } from "./roles.ts";

/** Who a policy applies to. */
export type PolicyPrincipalKind = "User" | "Group";

/** A policy. */
export interface Policy {
  /** The id. */
  readonly id: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** Null for a realm-level policy. */
  readonly orgId: string | null;
  /** The name. */
  readonly name: string;
  /** Whether the policy applies to a user or a group. */
  readonly principalKind: PolicyPrincipalKind;
  /** The user or group id the policy applies to. */
  readonly principalId: string;
  /** When it was created. */
  readonly createdAt: Date;
}

/** Input of {@link PolicyStore.create}. */
export interface CreatePolicyInput {
  /** The realm it belongs to. */
  readonly realmId: string;
  /** The organization it concerns, or null. */
  readonly orgId?: string | null;
  /** The name. */
  readonly name: string;
  /** Whether the policy applies to a user or a group. */
  readonly principalKind: PolicyPrincipalKind;
  /** A UUID; the principal itself is not looked up. */
  readonly principalId: string;
}

/** Storage of policies and their grants. */
export interface PolicyStore {
  /**
   * Creates a policy with its grants in one transaction (nothing is left when a grant
   * fails). NotFoundError: unknown realm or organization. ValidationError: bad
   * principal kind or id, organization of another realm, bad grant. ConflictError
   * reason: `grant_exists`.
   */
  create(
    input: CreatePolicyInput,
    grants?: readonly GrantInput[],
  ): Promise<{ policy: Policy; grants: Grant[] }>;
  /** The policy with this id, or null. */
  get(id: string): Promise<Policy | null>;
  /** The policies of a realm, by creation time then id. */
  list(realmId: string): Promise<Policy[]>;
  /**
   * One page of a realm's policies (creation time, then id) and how many match in all:
   * `orgId` undefined: every policy, null: realm-level ones, an id: that organization's;
   * `principal`: only the policies of that user or group.
   */
  listPage(realmId: string, query: {
    readonly orgId?: string | null;
    readonly principal?: { readonly kind: PolicyPrincipalKind; readonly id: string };
    readonly offset: number;
    readonly limit: number;
  }): Promise<ListPage<Policy>>;
  /**
   * The policies of a principal, by creation time then id. `orgId` undefined: all;
   * null: realm-level ones only; an id: realm-level ones plus that organization's.
   */
  listForPrincipal(
    principalKind: PolicyPrincipalKind,
    principalId: string,
    options?: { orgId?: string | null },
  ): Promise<Policy[]>;
  /** Deletes a policy and its grants, atomically; false when there was none. */
  delete(id: string): Promise<boolean>;
  /** Adds a grant. NotFoundError: unknown policy. ConflictError reason: `grant_exists`. */
  addGrant(policyId: string, grant: GrantInput): Promise<Grant>;
  /** Removes one grant of the policy; false when the policy has no such grant. */
  removeGrant(policyId: string, grantId: string): Promise<boolean>;
  /** The grants of a policy, by creation time then id. */
  listGrants(policyId: string): Promise<Grant[]>;
  /** The grant of a policy with this logical identity (see `RoleStore.findGrantByLogicalIdentity`), or null. */
  findGrantByLogicalIdentity(
    policyId: string,
    pattern: string,
    effect: GrantEffect,
    condition: unknown,
  ): Promise<Grant | null>;
}
