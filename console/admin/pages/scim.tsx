/**
 * SCIM provisioning (the `scim` plugin): an organization's connections from its identity
 * provider. The list; a new connection (its bearer token shown once, with copy); a connection's
 * page with the base URL to give the IdP, token rotation (the new token shown once), delete and
 * the provisioning log.
 *
 * @module
 */
import { useState } from "hono/jsx/dom";
import { api, query } from "../api.ts";
import { href, navigate } from "../router.ts";
import { useSession } from "../session.ts";
import {
  ConfirmButton,
  CopyValue,
  Field,
  FormError,
  Page,
  PagedTable,
  Show,
  Submit,
  Table,
  useForm,
  useLoad,
  When,
} from "../ui.tsx";
import { Named, Picker, resolvePick } from "../picker.tsx";

const BASE = "/svc-admin/scim/connections";

/** A provisioning log entry as the API shows it. */
interface LogEntry {
  at: string;
  method: string;
  path: string;
  status: number;
  scimType: string | null;
  detail: string | null;
  resourceId: string | null;
}

function useCanManage(): boolean {
  const session = useSession();
  return session.can("scim:global:connections-manage") ||
    (session.profile.orgId !== null && session.can("scim:org:connections-manage"));
}

/** The bearer token, shown this once, with the base URL it goes with. */
function TokenOnce(props: { token: string; baseUrl: string; rotated?: boolean }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret" role="status">
      <p>
        <strong>{props.rotated ? "New bearer token" : "Bearer token"}</strong>{" "}
        — shown this once. Copy it into the identity provider now: it cannot be shown again (a lost token is
        replaced by rotating it).
      </p>
      <code data-secret>{props.token}</code>
      <button
        type="button"
        onClick={() =>
          navigator.clipboard?.writeText(props.token).then(() => setCopied(true), () => setCopied(false))}
      >
        {copied ? "Copied" : "Copy"}
        <span class="sr-only">the bearer token</span>
      </button>
      <CopyValue label="SCIM base URL" value={props.baseUrl} />
    </div>
  );
}

/** What became of a request, in words. */
export function outcomeOf(entry: LogEntry): string {
  if (entry.status < 400) return entry.resourceId ? `ok (${entry.resourceId})` : "ok";
  const what = entry.scimType ?? (entry.status === 401 ? "unauthorized" : "error");
  return entry.detail ? `${what}: ${entry.detail}` : what;
}

/** The SCIM connections page. */
export function ScimConnections() {
  const canManage = useCanManage();
  const [offset, setOffset] = useState(0);
  const [created, setCreated] = useState<{ id: string; token: string; baseUrl: string } | null>(null);
  const loaded = useLoad(() => api("GET", `${BASE}${query({ offset, limit: 20 })}`), String(offset));
  const form = useForm(async (values, el) => {
    const orgId = await resolvePick("Organization", values.org, "org");
    const c = await api("POST", BASE, {
      orgId,
      displayName: values.displayName,
      deleteMode: values.deleteMode,
    });
    setCreated({ id: c.id, token: c.token, baseUrl: c.baseUrl });
    el.reset();
    loaded.reload();
  });
  return (
    <Page title="SCIM provisioning">
      <p>
        An organization's identity provider creates, updates and removes its users and groups here over SCIM
        2.0. Create a connection, then give the provider its base URL and bearer token.
      </p>
      {created
        ? (
          <>
            <TokenOnce token={created.token} baseUrl={created.baseUrl} />
            <p>
              <a href={href(`/scim/${created.id}`)}>Open the new connection</a>
            </p>
          </>
        )
        : null}
      <section class="card" aria-labelledby="scim-list-h">
        <h2 id="scim-list-h">Connections</h2>
        <Show loaded={loaded}>
          {(list) => (
            <PagedTable
              list={list}
              empty="No SCIM connection yet."
              onPage={setOffset}
              columns={["Name", "Organization", "On delete", "Token rotated", "Created"]}
              row={(c: any) => (
                <>
                  <td>
                    <a href={href(`/scim/${c.id}`)}>{c.displayName}</a>
                  </td>
                  <td>
                    <Named kind="Organization" id={c.orgId} />
                  </td>
                  <td>{c.deleteMode === "erase" ? "erase the user" : "remove from the organization"}</td>
                  <td>
                    <When at={c.tokenRotatedAt} />
                  </td>
                  <td>
                    <When at={c.createdAt} />
                  </td>
                </>
              )}
            />
          )}
        </Show>
      </section>
      {canManage
        ? (
          <form onSubmit={form.onSubmit} class="card" aria-labelledby="scim-new-h">
            <h2 id="scim-new-h">Create a connection</h2>
            <Picker
              kind="Organization"
              label="Organization"
              name="org"
              required
              error={form.fields.org ?? form.fields.orgId}
            />
            <Field
              label="Display name"
              name="displayName"
              required
              placeholder="Acme Okta provisioning"
              error={form.fields.displayName}
            />
            <Field
              label="When the IdP deletes a user"
              name="deleteMode"
              value="remove_membership"
              options={[["remove_membership", "Remove it from the organization"], [
                "erase",
                "Erase the user",
              ]]}
              error={form.fields.deleteMode}
            />
            <FormError form={form} />
            <Submit form={form}>Create connection</Submit>
          </form>
        )
        : null}
    </Page>
  );
}

/** One SCIM connection: its base URL, token rotation, delete and the provisioning log. */
export function ScimConnectionDetail(props: { id: string }) {
  const canManage = useCanManage();
  const path = `${BASE}/${encodeURIComponent(props.id)}`;
  const loaded = useLoad(() => api("GET", path), props.id);
  const log = useLoad(() => api<{ items: LogEntry[] }>("GET", `${path}/log?limit=100`), props.id);
  const [token, setToken] = useState<string | null>(null);
  const rotate = useForm(async (values) => {
    const overlap = values.overlapSeconds === "" ? undefined : Number(values.overlapSeconds);
    const r = await api("POST", `${path}/rotate`, overlap === undefined ? {} : { overlapSeconds: overlap });
    setToken(r.token);
    loaded.reload();
  });
  const c = loaded.data;
  return (
    <Page title={c ? `SCIM: ${c.displayName}` : "SCIM connection"}>
      <p>
        <a href={href("/scim")}>All SCIM connections</a>
      </p>
      <Show loaded={loaded}>
        {(c: any) => (
          <>
            {token ? <TokenOnce token={token} baseUrl={c.baseUrl} rotated /> : null}
            <section class="card" aria-labelledby="scim-idp-h">
              <h2 id="scim-idp-h">Give this to the identity provider</h2>
              <CopyValue label="SCIM base URL" value={c.baseUrl} />
              <p class="muted">
                With the bearer token shown when the connection was made (or last rotated). Organization:{" "}
                <Named kind="Organization" id={c.orgId} />. Token rotated <When at={c.tokenRotatedAt} />
                {c.previousTokenExpiresAt
                  ? (
                    <>
                      ; the previous token works until <When at={c.previousTokenExpiresAt} />
                    </>
                  )
                  : null}.
              </p>
            </section>
            {canManage
              ? (
                <form onSubmit={rotate.onSubmit} class="card" aria-labelledby="scim-rotate-h">
                  <h2 id="scim-rotate-h">Rotate the token</h2>
                  <Field
                    label="Seconds the old token keeps working (optional)"
                    name="overlapSeconds"
                    type="number"
                    inputmode="numeric"
                    hint="Empty: the server's default. 0: the old token stops at once."
                    error={rotate.fields.overlapSeconds}
                  />
                  <FormError form={rotate} />
                  <Submit form={rotate}>Rotate token</Submit>
                </form>
              )
              : null}
          </>
        )}
      </Show>
      <section class="card" aria-labelledby="scim-log-h">
        <h2 id="scim-log-h">Provisioning log</h2>
        <Show loaded={log}>
          {(l) =>
            l.items.length === 0 ? <p class="muted">No request yet.</p> : (
              <Table
                rows={l.items}
                caption="Requests of the identity provider, newest first"
                columns={["Time", "Method", "Path", "Status", "Outcome"]}
                row={(e) => (
                  <>
                    <td>
                      <When at={e.at} />
                    </td>
                    <td>{e.method}</td>
                    <td>
                      <code>{e.path}</code>
                    </td>
                    <td>{e.status}</td>
                    <td>{outcomeOf(e)}</td>
                  </>
                )}
              />
            )}
        </Show>
        <button type="button" onClick={() => log.reload()}>Refresh the log</button>
      </section>
      {canManage && c
        ? (
          <section class="card" aria-labelledby="scim-danger-h">
            <h2 id="scim-danger-h">Delete</h2>
            <ConfirmButton
              label="Delete connection"
              title={`Delete ${c.displayName}?`}
              message="Its token stops working at once. Provisioned users stay."
              typed={c.displayName}
              onConfirm={async () => {
                await api("DELETE", path);
                navigate("/scim");
              }}
            />
          </section>
        )
        : null}
    </Page>
  );
}
