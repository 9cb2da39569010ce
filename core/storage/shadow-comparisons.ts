/**
 * Shadow-mode authorization comparisons (issue 15): one row per comparison of a host's legacy
 * decision with svc's, kept for the ShadowAuthzReport (spec 2.11).
 *
 * @module
 */

/** One comparison to record. */
export interface ShadowComparisonInput {
  /** The realm it belongs to. */
  readonly realmId: string;
  /** The user it concerns. */
  readonly userId: string;
  /** The organization it concerns, or null. */
  readonly orgId: string | null;
  /** The permission checked. */
  readonly permission: string;
  /** Whether the legacy system allowed. */
  readonly legacyAllowed: boolean;
  /** svc's decision (`Allowed`, `Denied`, `DeniedByDefault`). */
  readonly svcDecision: string;
  /** Whether both allowed or both refused. */
  readonly agreed: boolean;
}

/** Which comparisons a tally counts. */
export interface ShadowFilter {
  /** Recorded at or after this time. */
  readonly from?: Date;
  /** Recorded before this time. */
  readonly to?: Date;
  /** Only this permission. */
  readonly permission?: string;
}

/** How many comparisons agreed and diverged. */
export interface ShadowTally {
  /** Comparisons where both allowed or both refused. */
  readonly agreements: number;
  /** Comparisons where the decisions differed. */
  readonly divergences: number;
}

/** Storage of shadow comparisons. */
export interface ShadowComparisonStore {
  /** Records one comparison (time from the store's clock). */
  record(input: ShadowComparisonInput): Promise<void>;
  /** The agreements and divergences of a realm matching `filter`. */
  tally(realmId: string, filter?: ShadowFilter): Promise<ShadowTally>;
}
