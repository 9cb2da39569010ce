/**
 * Overview: the realm, counts, readiness checks, the break-glass drill and failing webhooks.
 * Each panel loads on its own, so one the administrator may not read shows its 403 alone.
 *
 * @module
 */
import { api, API_BASE } from "../api.ts";
import { href } from "../router.ts";
import { useSession } from "../session.ts";
import { Page, Show, useLoad, When } from "../ui.tsx";

function Count(props: { label: string; path: string; link: string }) {
  const loaded = useLoad(() => api<{ total: number }>("GET", props.path), props.path);
  return (
    <div class="stat">
      <Show loaded={loaded}>{(d) => <a href={href(props.link)} class="stat-value">{d.total}</a>}</Show>
      <span class="stat-label">{props.label}</span>
    </div>
  );
}

function Readiness() {
  const loaded = useLoad(async () => {
    const res = await fetch(`${API_BASE}/readyz`, { headers: { Accept: "application/json" } });
    // The details need an administrator of the break-glass drill (or the metrics token); anyone else gets the
    // check names only.
    return await res.json() as {
      status: string;
      checks: string[] | Record<string, { status?: string; ok?: boolean; detail?: unknown }>;
    };
  }, "readyz");
  return (
    <section class="card" aria-labelledby="ready-h">
      <h2 id="ready-h">Readiness</h2>
      <Show loaded={loaded}>
        {(r) => (
          <>
            <p>
              Status: <strong class={r.status === "ready" ? "ok" : "bad"}>{r.status}</strong>
            </p>
            <ul class="plain">
              {Array.isArray(r.checks) && r.checks.map((name) => (
                <li>
                  <code>{name}</code>
                </li>
              ))}
              {!Array.isArray(r.checks) && Object.entries(r.checks ?? {}).map(([name, check]) => (
                <li>
                  <code>{name}</code>: {typeof check === "object" && check !== null
                    ? (check.status ?? (check.ok ? "ok" : "failing"))
                    : String(check)}
                </li>
              ))}
            </ul>
          </>
        )}
      </Show>
    </section>
  );
}

function BreakGlassPanel() {
  const loaded = useLoad(() => api("GET", "/svc-admin/break-glass/status"), "bg");
  return (
    <section class="card" aria-labelledby="bg-h">
      <h2 id="bg-h">Break-glass drill</h2>
      <Show loaded={loaded}>
        {(s) => (
          <p>
            {s.account === null ? "No break-glass account. " : null}
            Last drill: <When at={s.lastDrillAt} />.{" "}
            {s.drillOverdue ? <strong class="bad">Drill overdue.</strong> : (
              <>
                Next due <When at={s.drillDueAt} />.
              </>
            )} <a href={href("/break-glass")}>Open break-glass</a>
          </p>
        )}
      </Show>
    </section>
  );
}

function WebhookFailures() {
  const loaded = useLoad(() => api("GET", "/svc-admin/webhooks"), "wh");
  return (
    <section class="card" aria-labelledby="whf-h">
      <h2 id="whf-h">Webhook failures</h2>
      <Show loaded={loaded}>
        {(d) => {
          const failing = (d.endpoints as any[]).filter((e) => e.consecutiveFailures > 0 || !e.enabled);
          return failing.length === 0 ? <p>No endpoint is failing.</p> : (
            <ul class="plain">
              {failing.map((e) => (
                <li>
                  <a href={href(`/webhooks/${e.id}`)}>{e.url}</a>: {e.consecutiveFailures}{" "}
                  consecutive failures
                  {e.enabled ? "" : " (disabled)"}
                </li>
              ))}
            </ul>
          );
        }}
      </Show>
    </section>
  );
}

/** The overview page. */
export function Overview() {
  const session = useSession();
  const realm = useLoad(() => api("GET", `/svc-admin/realms/${session.profile.realmId}`), "realm");
  const global = session.isGlobal("realms-read");
  return (
    <Page title="Overview">
      <section class="card" aria-labelledby="realm-h">
        <h2 id="realm-h">Realm</h2>
        {global
          ? (
            <Show loaded={realm}>
              {(r) => (
                <p>
                  <strong>{r.displayName}</strong>{" "}
                  (<code>{r.name}</code>){r.isDefault ? ", the default realm" : ""}
                </p>
              )}
            </Show>
          )
          : (
            <p>
              Realm <code>{session.profile.realmId}</code>, organization{" "}
              <code>{session.profile.orgId ?? "—"}</code>
            </p>
          )}
      </section>
      <section class="card" aria-labelledby="counts-h">
        <h2 id="counts-h">Counts</h2>
        <div class="stats">
          {session.canAny("users-read")
            ? <Count label="Users" path="/svc-admin/users?limit=1" link="/users" />
            : null}
          {session.isGlobal("orgs-read")
            ? <Count label="Organizations" path="/svc-admin/organizations?limit=1" link="/organizations" />
            : null}
          {session.canAny("roles-read")
            ? <Count label="Roles" path="/svc-admin/roles?limit=1" link="/roles" />
            : null}
          {session.isGlobal("service-accounts-read")
            ? (
              <Count
                label="Service accounts"
                path="/svc-admin/service-accounts?limit=1"
                link="/service-accounts"
              />
            )
            : null}
        </div>
      </section>
      <Readiness />
      {session.isGlobal("break-glass-read") ? <BreakGlassPanel /> : null}
      {session.canAny("webhooks-read") ? <WebhookFailures /> : null}
    </Page>
  );
}
