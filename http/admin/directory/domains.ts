/**
 * Organization domain admin routes (spec 2.10: kind such as `EmailDomain`, value, `Verified`):
 *
 * | Method | Path | Body → answer |
 * |---|---|---|
 * | GET | `/svc-admin/organizations/{orgId}/domains` | → `{items, offset, limit, total}` |
 * | POST | `/svc-admin/organizations/{orgId}/domains` | `{kind?, value}` → 201 domain with its TXT record |
 * | DELETE | `/svc-admin/organizations/{orgId}/domains/{domainId}` | → 204 |
 * | POST | `/svc-admin/organizations/{orgId}/domains/{domainId}/verify` | `{}` or `{override: true, reason}` → domain |
 *
 * A domain is added unverified with a random token; control is proven by publishing the TXT
 * record `svc-domain-verification=<token>` at `_svc-verification.<domain>` and calling verify,
 * which looks it up through the runtime's resolver and compares the token in constant time. An
 * admin holding `svc:global:orgs-manage` may instead verify with `{override: true, reason}`,
 * recorded in the audit entry. A domain already verified by another organization of the realm is
 * 409 `domain_verified_elsewhere`. Only verified `EmailDomain` rows route logins.
 *
 * @module
 */
import * as v from "valibot";
import { constantTimeEqual } from "../../../core/digest.ts";
import { ForbiddenError, SvcError } from "../../../core/errors.ts";
import { randomToken } from "../../../core/random.ts";
import { EMAIL_DOMAIN, type OrganizationDomain } from "../../../core/storage/organizations.ts";
import type { RouteInstaller } from "../../app.ts";
import { fence, type FenceScope } from "../../auth/fence.ts";
import { documented, errorResponses } from "../../openapi/operation.ts";
import { parseBody } from "../../validate.ts";
import type { AdminRouteDeps, TxtResolver } from "../deps.ts";
import {
  adminMutation,
  asConflict,
  hidden,
  listBodyOf,
  listSchema,
  pageOf,
  PageQuerySchema,
  parseQuery,
} from "../kit.ts";
import { ORGS_MANAGE, ORGS_READ } from "./organizations.ts";
import { pathId, visibleOrg } from "./shared.ts";

/** The label under the domain where the proof record lives. */
export const VERIFICATION_LABEL = "_svc-verification";
/** What the TXT record's text starts with; the token follows. */
export const VERIFICATION_PREFIX = "svc-domain-verification=";
/** How long a DNS lookup may take before the verification fails. */
export const TXT_LOOKUP_TIMEOUT_MS = 5_000;

const HOSTNAME =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The body of `POST /svc-admin/organizations/{orgId}/domains`. */
export const AddDomainSchema = v.strictObject({
  kind: v.optional(
    v.pipe(
      v.string("kind must be a string"),
      v.regex(/^[A-Za-z][A-Za-z0-9]{0,63}$/, "kind must be a word such as EmailDomain"),
      v.description("Default `EmailDomain`."),
    ),
  ),
  value: v.pipe(
    v.string("value must be a string"),
    v.trim(),
    v.toLowerCase(),
    v.regex(HOSTNAME, "value must be a domain name such as example.com"),
  ),
});

/** The body of `POST …/domains/{domainId}/verify`: empty for the DNS proof, or the audited override. */
export const VerifyDomainSchema = v.union([
  v.strictObject({ override: v.optional(v.literal(false)) }),
  v.strictObject({
    override: v.literal(true),
    reason: v.pipe(
      v.string("reason must be a string"),
      v.trim(),
      v.minLength(1, "reason must say why the DNS proof is skipped"),
      v.maxLength(500, "reason is longer than 500 characters"),
    ),
  }),
], "send {} to check DNS, or {override: true, reason}");

/** A domain as the API shows it, with the TXT record that proves control. */
export function domainView(d: OrganizationDomain) {
  return {
    id: d.id,
    orgId: d.orgId,
    kind: d.kind,
    value: d.value,
    verified: d.verified,
    createdAt: d.createdAt.toISOString(),
    verificationRecord: d.verificationToken === null ? null : {
      type: "TXT" as const,
      name: `${VERIFICATION_LABEL}.${d.value}`,
      value: `${VERIFICATION_PREFIX}${d.verificationToken}`,
    },
  };
}

/** The schema of {@link domainView}. */
export const OrganizationDomainSchema = v.pipe(
  v.object({
    id: v.string(),
    orgId: v.string(),
    kind: v.string(),
    value: v.string(),
    verified: v.boolean(),
    createdAt: v.string(),
    verificationRecord: v.pipe(
      v.nullable(v.object({ type: v.literal("TXT"), name: v.string(), value: v.string() })),
      v.description("Publish this DNS record, then call verify."),
    ),
  }),
  v.title("OrganizationDomain"),
);

/** The answer of a failed DNS proof. */
export class DomainVerificationFailedError extends SvcError {
  constructor(message: string, code = "domain_verification_failed") {
    super(code, message, 409);
  }
}

/** Whether the TXT records of `_svc-verification.<domain>` carry the token (compared in constant time). */
export async function txtProves(resolve: TxtResolver, domain: string, token: string): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<string[][]>((_, reject) => {
    timer = setTimeout(() => reject(new Error("DNS lookup timed out")), TXT_LOOKUP_TIMEOUT_MS);
  });
  let records: string[][];
  try {
    records = await Promise.race([resolve(`${VERIFICATION_LABEL}.${domain}`), timeout]);
  } catch {
    return false; // no such name, no TXT records, or no answer in time: not proven
  } finally {
    clearTimeout(timer);
  }
  let proven = false;
  for (const chunks of records) {
    const text = chunks.join("");
    if (!text.startsWith(VERIFICATION_PREFIX)) continue;
    if (constantTimeEqual(text.slice(VERIFICATION_PREFIX.length), token)) proven = true;
  }
  return proven;
}

const TAGS = ["Admin: organizations"];
const DomainListSchema = v.pipe(listSchema(OrganizationDomainSchema), v.title("OrganizationDomainList"));
const params = { orgId: "The organization id.", domainId: "The domain id." };

/** The organization domain routes. */
export function domainRoutes(deps: AdminRouteDeps): RouteInstaller {
  const { storage, snapshots } = deps;

  /** The domain of the visible organization, else 404. */
  const visibleDomain = async (scope: FenceScope, orgId: string, domainId: string, tx = storage) => {
    await visibleOrg(tx, scope, orgId);
    const domain = await tx.organizations.getDomain(domainId);
    if (domain === null || domain.orgId !== orgId) throw hidden("domain");
    return domain;
  };

  const install: RouteInstaller = (app, appDeps) => {
    const now = () => appDeps.clock.now();

    app.get("/svc-admin/organizations/:orgId/domains", async (c) => {
      const scope = await fence(c, snapshots, ORGS_READ);
      const org = await visibleOrg(storage, scope, pathId(c, "orgId", "organization"));
      const page = pageOf(parseQuery(c, PageQuerySchema));
      const all = await storage.organizations.listDomains(org.id);
      return c.json(listBodyOf(all, page, domainView));
    });

    app.post("/svc-admin/organizations/:orgId/domains", async (c) => {
      const scope = await fence(c, snapshots, ORGS_MANAGE);
      const orgId = pathId(c, "orgId", "organization");
      const body = await parseBody(c, AddDomainSchema);
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const org = await visibleOrg(tx, scope, orgId);
        const domain = await tx.organizations.addDomain({
          orgId,
          kind: body.kind ?? EMAIL_DOMAIN,
          value: body.value,
          verificationToken: randomToken(appDeps.random, 24),
        }).catch(asConflict);
        await emit({
          kind: "organization.domain_added",
          occurredAt: now(),
          realmId: org.realmId,
          orgId,
          data: { domainId: domain.id, kind: domain.kind, value: domain.value },
        });
        const { verificationRecord: _token, ...audited } = domainView(domain);
        return {
          value: domain,
          audit: { action: "organization.domain.add", target: domain.id, orgId, after: audited },
        };
      });
      return c.json(domainView(value), 201);
    });

    app.delete("/svc-admin/organizations/:orgId/domains/:domainId", async (c) => {
      const scope = await fence(c, snapshots, ORGS_MANAGE);
      const orgId = pathId(c, "orgId", "organization");
      const domainId = pathId(c, "domainId", "domain");
      await adminMutation(deps, scope, async ({ tx, emit }) => {
        const domain = await visibleDomain(scope, orgId, domainId, tx);
        if (!await tx.organizations.removeDomain(domainId)) throw hidden("domain");
        await emit({
          kind: "organization.domain_removed",
          occurredAt: now(),
          realmId: scope.principal.realmId,
          orgId,
          data: { domainId, kind: domain.kind, value: domain.value },
        });
        const { verificationRecord: _token, ...audited } = domainView(domain);
        return {
          value: null,
          audit: { action: "organization.domain.remove", target: domainId, orgId, before: audited },
        };
      });
      return c.body(null, 204);
    });

    app.post("/svc-admin/organizations/:orgId/domains/:domainId/verify", async (c) => {
      const scope = await fence(c, snapshots, ORGS_MANAGE);
      const orgId = pathId(c, "orgId", "organization");
      const domainId = pathId(c, "domainId", "domain");
      const body = await parseBody(c, VerifyDomainSchema);
      const domain = await visibleDomain(scope, orgId, domainId);
      const override = body.override === true;
      if (override && !scope.global) {
        throw new ForbiddenError("Verifying a domain without the DNS proof needs the realm-wide permission.");
      }
      if (domain.verified) return c.json(domainView(domain));
      if (!override) {
        if (deps.resolveTxt === undefined) {
          throw new DomainVerificationFailedError(
            "This server cannot look up DNS records; an administrator of the realm may verify with an override.",
            "domain_verification_unavailable",
          );
        }
        if (
          domain.verificationToken === null ||
          !(await txtProves(deps.resolveTxt, domain.value, domain.verificationToken))
        ) {
          throw new DomainVerificationFailedError(
            `No TXT record ${VERIFICATION_LABEL}.${domain.value} carries this domain's verification value yet.`,
          );
        }
      }
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const current = await visibleDomain(scope, orgId, domainId, tx);
        if (current.verified) return { value: current, audit: null };
        const elsewhere = await tx.organizations.findVerifiedDomain(current.kind, current.value, {
          realmId: scope.principal.realmId.toLowerCase(),
        });
        if (elsewhere !== null && elsewhere.orgId !== orgId) {
          throw new SvcError(
            "domain_verified_elsewhere",
            "Another organization of the realm has verified this domain.",
            409,
          );
        }
        const verified = await tx.organizations.setDomainVerified(domainId, true);
        const method = override ? "override" : "dns";
        await emit({
          kind: "organization.domain_verified",
          occurredAt: now(),
          realmId: scope.principal.realmId,
          orgId,
          data: { domainId, kind: verified.kind, value: verified.value, method },
        });
        return {
          value: verified,
          audit: {
            action: "organization.domain.verify",
            target: domainId,
            orgId,
            before: { kind: current.kind, value: current.value, verified: false },
            after: {
              kind: verified.kind,
              value: verified.value,
              verified: true,
              method,
              ...(body.override === true ? { reason: body.reason } : {}),
            },
          },
        };
      });
      return c.json(domainView(value));
    });
  };

  return documented(install, [
    {
      method: "GET",
      path: "/svc-admin/organizations/:orgId/domains",
      summary: "List an organization's domains",
      description: "By kind, value, then id.",
      tags: TAGS,
      permissions: [...ORGS_READ.global, ...ORGS_READ.org],
      params: { orgId: params.orgId },
      query: PageQuerySchema,
      responses: {
        200: { description: "A page of domains", body: DomainListSchema },
        ...errorResponses(400, 401, 403, 404),
      },
    },
    {
      method: "POST",
      path: "/svc-admin/organizations/:orgId/domains",
      summary: "Add a domain to an organization",
      description: "Added unverified; the answer names the TXT record that proves control.",
      tags: TAGS,
      permissions: [...ORGS_MANAGE.global, ...ORGS_MANAGE.org],
      params: { orgId: params.orgId },
      body: AddDomainSchema,
      responses: {
        201: {
          description: "The domain (`organization_domain_exists` on a duplicate)",
          body: OrganizationDomainSchema,
        },
        ...errorResponses(400, 401, 403, 404, 409),
      },
    },
    {
      method: "DELETE",
      path: "/svc-admin/organizations/:orgId/domains/:domainId",
      summary: "Remove a domain",
      tags: TAGS,
      permissions: [...ORGS_MANAGE.global, ...ORGS_MANAGE.org],
      params,
      responses: { 204: { description: "Removed" }, ...errorResponses(401, 403, 404) },
    },
    {
      method: "POST",
      path: "/svc-admin/organizations/:orgId/domains/:domainId/verify",
      summary: "Verify a domain",
      description: "`{}`: looks up the TXT record (409 `domain_verification_failed` without it). " +
        "`{override: true, reason}`: verifies without DNS, `svc:global:orgs-manage` only, audited with the reason.",
      tags: TAGS,
      permissions: [...ORGS_MANAGE.global, ...ORGS_MANAGE.org],
      params,
      body: VerifyDomainSchema,
      responses: {
        200: { description: "The verified domain", body: OrganizationDomainSchema },
        ...errorResponses(400, 401, 403, 404, 409),
      },
    },
  ]);
}
