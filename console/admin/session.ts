/**
 * The signed-in administrator: profile and allowed permission patterns, and what the console
 * offers from them (a realm-wide or an organization-scoped administrator).
 *
 * @module
 */
import { createContext, useContext } from "hono/jsx/dom";
import { parsePermissionPattern, type PermissionPattern } from "../../core/authz/pattern.ts";
import { parsePermissionId } from "../../core/authz/permission.ts";

/** `GET /profile/me`. */
export interface Profile {
  id: string;
  realmId: string;
  email: string;
  displayName: string | null;
  orgId: string | null;
  sessionId: string | null;
  mfa: string | null;
  impersonation: unknown;
}

/** The session the pages read. */
export interface Session {
  readonly profile: Profile;
  readonly patterns: readonly string[];
  /** Whether an allow pattern of the administrator matches `permission`. */
  can(permission: string): boolean;
  /** Whether the administrator holds `svc:global:<action>` or, in its organization, `svc:org:<action>`. */
  canAny(action: string): boolean;
  /** Whether the administrator is realm-wide for `action` (else organization-scoped, or nothing). */
  isGlobal(action: string): boolean;
  /** The optional plugins whose console pages this administrator gets (`saml`, `scim`). */
  readonly plugins: ReadonlySet<string>;
  signOut(): Promise<void>;
}

/** Builds a session from the profile and the permission patterns. */
export function makeSession(
  profile: Profile,
  patterns: readonly string[],
  signOut: () => Promise<void>,
  plugins: ReadonlySet<string> = new Set(),
): Session {
  const compiled: PermissionPattern[] = [];
  for (const text of patterns) {
    try {
      compiled.push(parsePermissionPattern(text));
    } catch {
      // a pattern the console does not understand grants nothing here (the API decides)
    }
  }
  const can = (permission: string) => {
    const id = parsePermissionId(permission);
    return compiled.some((p) => p.matches(id));
  };
  return {
    profile,
    patterns,
    can,
    canAny: (action) => can(`svc:global:${action}`) || (profile.orgId !== null && can(`svc:org:${action}`)),
    isGlobal: (action) => can(`svc:global:${action}`),
    plugins,
    signOut,
  };
}

/** The session context. */
export const SessionContext = createContext<Session | null>(null);

/** The current session (pages render only when signed in). */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (session === null) throw new Error("no session");
  return session;
}
