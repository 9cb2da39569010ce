/**
 * Shadow-mode authorization (spec appendix "Migration importer behaviour"; issue 15): before
 * cutover, a host keeps enforcing its legacy authorization and asks svc the same question on the
 * side. Each comparison records one agreement or divergence and hands the legacy decision back
 * unchanged; a divergence emits `authz.shadow_divergence` with both decisions and svc's explain
 * trace (grant by grant). The ShadowAuthzReport (spec 2.11) tallies a time window and says
 * `readyForCutover` only with zero divergences over a non-empty sample.
 *
 * @module
 */
import { type AccessCheck, type Decision, evaluate } from "../authz/evaluator.ts";
import type { Clock } from "../clock.ts";
import { EVENT_KINDS } from "../events/catalog.ts";
import type { TransactionalEvents } from "../audit/mutation.ts";
import type { BuiltSnapshot } from "../snapshots/build.ts";
import type { ShadowTally } from "../storage/shadow-comparisons.ts";

/** The resource of a shadow check (as in an access check). */
export interface ShadowResource {
  /** The resource's organization. */
  readonly orgId?: string | null;
  /** The resource's owner (for `self`). */
  readonly ownerId?: string | null;
  /** The resource's teams (for `team` and team-restricted grants). */
  readonly teamIds?: readonly string[] | null;
  /** Extra resource attributes for conditions. */
  readonly attributes?: Record<string, unknown> | null;
}

/** One comparison to make. */
export interface ShadowCheck {
  /** The realm of the check; a user of another realm is not compared. */
  readonly realmId: string;
  /** The user the check is about. */
  readonly userId: string;
  /** The organization context of the check, or null for the realm. */
  readonly orgId: string | null;
  /** The concrete permission id asked about, `service:scope:action`. */
  readonly permission: string;
  /** The resource the check concerns, or null/absent for none. */
  readonly resource?: ShadowResource | null;
  /** Context attributes for conditions, or null/absent for none. */
  readonly context?: Record<string, unknown> | null;
  /** What the legacy system decided: true allowed, false refused. */
  readonly legacyDecision: boolean;
}

/** The outcome of a comparison. */
export interface ShadowOutcome {
  /** The legacy decision, unchanged: what the host enforces. */
  readonly legacyDecision: boolean;
  /** What svc decided for the same check (`Allowed`, `Denied` or `DeniedByDefault`). */
  readonly svcDecision: Decision;
  /**
   * Whether svc's decision matches the legacy one (`Allowed` counts as allowed, anything else as refused).
   */
  readonly agreed: boolean;
}

/** The ShadowAuthzReport (spec 2.11). */
export interface ShadowAuthzReport {
  /** Comparisons in the tally where svc agreed with the legacy system. */
  readonly agreements: number;
  /** Comparisons in the tally where svc diverged from the legacy system. */
  readonly divergences: number;
  /** All comparisons in the tally (agreements plus divergences). */
  readonly total: number;
  /** True only with zero divergences over a non-empty sample. */
  readonly readyForCutover: boolean;
}

/** The report of a tally. */
export function shadowReport(tally: ShadowTally): ShadowAuthzReport {
  const total = tally.agreements + tally.divergences;
  return {
    agreements: tally.agreements,
    divergences: tally.divergences,
    total,
    readyForCutover: total > 0 && tally.divergences === 0,
  };
}

/** What the recorder needs. */
export interface ShadowRecorderDeps {
  /** The subject snapshot of a user in an organization context (the cached one is fine). */
  snapshot(userId: string, orgId: string | null): Promise<BuiltSnapshot | null>;
  /** Records the comparison and its event in one transaction. */
  readonly events: TransactionalEvents;
  readonly clock: Clock;
}

/** Compares legacy decisions with svc's and records each comparison. */
export class ShadowRecorder {
  /** Wires the recorder to its snapshot source, events and clock. */
  constructor(private readonly deps: ShadowRecorderDeps) {}

  /**
   * Evaluates the check with svc, records one agreement or divergence (and on a divergence the
   * `authz.shadow_divergence` event) and returns the legacy decision unchanged. Null when the user
   * is unknown in the realm (nothing recorded).
   */
  async compare(check: ShadowCheck): Promise<ShadowOutcome | null> {
    const built = await this.deps.snapshot(check.userId, check.orgId);
    if (built === null || built.realmId !== check.realmId) return null;
    const access: AccessCheck = {
      permission: check.permission,
      resourceOrgId: check.resource?.orgId ?? null,
      resourceOwnerId: check.resource?.ownerId ?? null,
      resourceTeamIds: check.resource?.teamIds ?? null,
      resourceAttributes: check.resource?.attributes ?? null,
      context: check.context ?? null,
    };
    const result = evaluate(built.subject, access, { trace: true });
    const svcAllowed = result.decision === "Allowed";
    const agreed = svcAllowed === check.legacyDecision;
    await this.deps.events.transaction(async (tx, emit) => {
      await tx.shadowComparisons.record({
        realmId: check.realmId,
        userId: check.userId,
        orgId: check.orgId,
        permission: check.permission,
        legacyAllowed: check.legacyDecision,
        svcDecision: result.decision,
        agreed,
      });
      if (agreed) return;
      const trace = result.trace ?? [];
      await emit({
        kind: EVENT_KINDS.authzShadowDivergence,
        occurredAt: this.deps.clock.now(),
        realmId: check.realmId,
        orgId: check.orgId,
        userId: check.userId,
        data: {
          permission: check.permission,
          resource: check.resource ?? null,
          legacyDecision: check.legacyDecision ? "Allowed" : "Denied",
          svcDecision: result.decision,
          trace: built.subject.grants.map((compiled, index) => ({
            pattern: compiled.grant.pattern,
            effect: compiled.effect,
            source: compiled.source,
            outcome: trace[index],
          })),
        },
      });
    });
    return { legacyDecision: check.legacyDecision, svcDecision: result.decision, agreed };
  }
}
