/**
 * The svc admin console: sign-in, the layout (skip link, navigation of what the administrator
 * may manage, sign-out) and the hash routes of the pages. All data comes from the admin API.
 *
 * @module
 */
import { type Child, render, useEffect, useState } from "hono/jsx/dom";
import { api, mayHaveSession, onSessionExpired } from "./api.ts";
import { href, navigate, type Route, useRoute } from "./router.ts";
import { makeSession, type Profile, type Session, SessionContext } from "./session.ts";
import { ErrorNote, focusNextPage, Page } from "./ui.tsx";
import { SignIn } from "./pages/sign-in.tsx";
import { Setup, SetupDone } from "./pages/setup.tsx";
import { Overview } from "./pages/overview.tsx";
import { UserDetail, Users } from "./pages/users.tsx";
import { RoleDetail, Roles } from "./pages/roles.tsx";
import { Explain } from "./pages/explain.tsx";
import { OrganizationDetail, Organizations } from "./pages/organizations.tsx";
import { WebhookDetail, Webhooks } from "./pages/webhooks.tsx";
import { Audit } from "./pages/audit.tsx";
import { Impersonation } from "./pages/impersonation.tsx";
import { BreakGlass } from "./pages/break-glass.tsx";
import { SigningKeys } from "./pages/signing-keys.tsx";
import { ServiceAccounts } from "./pages/service-accounts.tsx";
import { MyAccount } from "./pages/account.tsx";
import { SamlConnectionDetail, SamlConnections } from "./pages/saml.tsx";
import { ScimConnectionDetail, ScimConnections } from "./pages/scim.tsx";

/**
 * The optional plugins with console pages, each found by its list route: 200 means the plugin
 * is enabled and this administrator may read its connections (a disabled plugin's route is 404,
 * a missing permission 403; either way the page is not offered).
 */
const PLUGIN_PROBES: readonly (readonly [string, string])[] = [
  ["saml", "/svc-admin/saml/connections?limit=1"],
  ["scim", "/svc-admin/scim/connections?limit=1"],
];

async function detectPlugins(): Promise<Set<string>> {
  const found = await Promise.all(
    PLUGIN_PROBES.map(([name, path]) =>
      api("GET", path, undefined, { refresh: false }).then(() => name, () => null)
    ),
  );
  return new Set(found.filter((name): name is string => name !== null));
}

/** One entry of the navigation: shown when `visible(session)`. */
interface NavItem {
  path: string;
  label: string;
  visible: (s: Session) => boolean;
}

const NAV: NavItem[] = [
  { path: "/", label: "Overview", visible: () => true },
  { path: "/users", label: "Users", visible: (s) => s.canAny("users-read") },
  { path: "/organizations", label: "Organizations", visible: (s) => s.canAny("orgs-read") },
  { path: "/roles", label: "Roles and grants", visible: (s) => s.canAny("roles-read") },
  { path: "/explain", label: "Explain a decision", visible: (s) => s.canAny("authz-inspect") },
  { path: "/webhooks", label: "Webhooks", visible: (s) => s.canAny("webhooks-read") },
  { path: "/audit", label: "Audit", visible: (s) => s.isGlobal("audit-read") },
  { path: "/impersonation", label: "Impersonation", visible: (s) => s.canAny("impersonation-read") },
  { path: "/break-glass", label: "Break-glass", visible: (s) => s.isGlobal("break-glass-read") },
  { path: "/signing-keys", label: "Signing keys", visible: (s) => s.isGlobal("signing-keys-read") },
  {
    path: "/service-accounts",
    label: "Service accounts and API keys",
    visible: (s) => s.isGlobal("service-accounts-read") || s.canAny("api-keys-read"),
  },
  { path: "/saml", label: "SAML sign-in", visible: (s) => s.plugins.has("saml") },
  { path: "/scim", label: "SCIM provisioning", visible: (s) => s.plugins.has("scim") },
  { path: "/account", label: "My passkeys", visible: () => true },
];

function Routed(props: { segments: string[] }) {
  const [first, second] = props.segments;
  switch (first) {
    case undefined:
      return <Overview />;
    case "users":
      return second ? <UserDetail id={second} /> : <Users />;
    case "organizations":
      return second ? <OrganizationDetail id={second} /> : <Organizations />;
    case "roles":
      return second ? <RoleDetail id={second} /> : <Roles />;
    case "explain":
      return <Explain />;
    case "webhooks":
      return second ? <WebhookDetail id={second} /> : <Webhooks />;
    case "audit":
      return <Audit />;
    case "impersonation":
      return <Impersonation />;
    case "break-glass":
      return <BreakGlass />;
    case "signing-keys":
      return <SigningKeys />;
    case "service-accounts":
      return <ServiceAccounts />;
    case "saml":
      return second ? <SamlConnectionDetail id={second} /> : <SamlConnections />;
    case "scim":
      return second ? <ScimConnectionDetail id={second} /> : <ScimConnections />;
    case "account":
      return <MyAccount />;
    case "setup":
      return <SetupDone />;
    default:
      return (
        <Page title="Page not found">
          <p>
            There is no console page here. <a href={href("/")}>Go to the overview</a>.
          </p>
        </Page>
      );
  }
}

/**
 * The frame around every page. It takes the route from `App` rather than subscribing to
 * `hashchange` itself: one subscription means one re-render per navigation (a parent and a child
 * both updating on the same event could reconcile the new page twice).
 */
function Layout(props: { session: Session; route: Route; children: Child }) {
  const { session } = props;
  const current = `/${props.route.segments[0] ?? ""}`;
  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(e: Event) => {
          e.preventDefault();
          document.getElementById("main")?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <span class="brand">svc admin</span>
        <span class="who">
          {session.profile.email}
          {session.profile.orgId
            ? <span class="badge">organization {session.profile.orgId.slice(0, 8)}</span>
            : null}
        </span>
        <button type="button" onClick={() => session.signOut()}>Sign out</button>
      </header>
      <div class="frame">
        <nav aria-label="Console">
          <ul>
            {NAV.filter((item) => item.visible(session)).map((item) => (
              <li>
                <a href={href(item.path)} aria-current={current === item.path ? "page" : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>{props.children}</main>
      </div>
    </>
  );
}

type State =
  | { kind: "loading" }
  | { kind: "signed-out"; notice?: string }
  | { kind: "signed-in"; session: Session }
  | { kind: "error"; error: unknown };

function App() {
  const [state, setState] = useState<State>({ kind: "loading" });
  const route = useRoute();

  const load = async () => {
    if (!mayHaveSession()) {
      setState({ kind: "signed-out" });
      return;
    }
    try {
      const profile = await api<Profile>("GET", "/profile/me");
      const [permissions, plugins] = await Promise.all([
        api<{ permissions: string[] }>("GET", "/profile/permissions"),
        detectPlugins(),
      ]);
      const signOut = async () => {
        try {
          await api("POST", "/auth/logout", undefined, { refresh: false });
        } finally {
          setState({ kind: "signed-out", notice: "You are signed out." });
        }
      };
      setState({
        kind: "signed-in",
        session: makeSession(profile, permissions.permissions, signOut, plugins),
      });
    } catch (error) {
      if ((error as { status?: number }).status === 401) setState({ kind: "signed-out" });
      else setState({ kind: "error", error });
    }
  };

  useEffect(() => {
    onSessionExpired(() =>
      setState({ kind: "signed-out", notice: "Your session ended. Sign in again to continue." })
    );
    load();
  }, []);

  switch (state.kind) {
    case "loading":
      return <p class="muted" role="status">Loading…</p>;
    case "error":
      return (
        <main id="main">
          <h1>The console could not start</h1>
          <ErrorNote error={state.error} />
        </main>
      );
    case "signed-out":
      if (route.segments[0] === "setup" && route.params.get("token")) {
        return (
          <Setup
            token={route.params.get("token")!}
            onSignedIn={() => {
              navigate("/setup");
              focusNextPage();
              load();
            }}
            onSignIn={() => navigate("/")}
          />
        );
      }
      return (
        <SignIn
          onSignedIn={() => {
            focusNextPage();
            load();
          }}
          notice={state.notice}
        />
      );
    case "signed-in":
      return (
        <SessionContext.Provider value={state.session}>
          <Layout session={state.session} route={route}>
            <Routed segments={route.segments} />
          </Layout>
        </SessionContext.Provider>
      );
  }
}

render(<App />, document.getElementById("root")!);
