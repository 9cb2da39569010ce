/**
 * The organization a password sign-in asks for (`org` of `POST /auth/login`): its id, its name
 * (unique per realm, compared without case) or one of its verified email domains.
 *
 * No organization enumeration: a name or domain is looked up only after the password was
 * verified, and only among the organizations the signed-in user belongs to; a reference that
 * names no such organization answers null, which the caller refuses exactly as it refuses an
 * organization the user is not a member of (403 "You are not a member of this organization").
 *
 * @module
 */
import { UUID_PATTERN } from "../ids.ts";
import { EMAIL_DOMAIN, type OrganizationStore } from "../storage/organizations.ts";

/** Longest reference looked up (the route also limits it). */
export const MAX_ORGANIZATION_REFERENCE_LENGTH = 253;

/**
 * The organization id `reference` stands for: a UUID as given (membership is the caller's
 * check), else the id of the user's organization whose name or verified email domain it is, else
 * null.
 */
export async function resolveOrganizationReference(
  organizations: Pick<OrganizationStore, "listOrgsOfUser" | "findVerifiedDomain">,
  user: { readonly id: string; readonly realmId: string },
  reference: string,
): Promise<string | null> {
  if (UUID_PATTERN.test(reference)) return reference;
  const wanted = reference.trim().toLowerCase();
  if (wanted === "" || wanted.length > MAX_ORGANIZATION_REFERENCE_LENGTH) return null;
  const mine = await organizations.listOrgsOfUser(user.id);
  const byName = mine.find((org) => org.name.toLowerCase() === wanted);
  if (byName) return byName.id;
  if (!wanted.includes(".")) return null;
  const domain = await organizations.findVerifiedDomain(EMAIL_DOMAIN, wanted, { realmId: user.realmId });
  if (domain === null) return null;
  return mine.some((org) => org.id === domain.orgId) ? domain.orgId : null;
}
