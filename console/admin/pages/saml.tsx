/**
 * SAML sign-in (the `saml` plugin): an organization's identity providers. The list; a new
 * connection from the IdP's metadata, pasted or by URL; a connection's page with the values to
 * give the IdP (each with a copy button), the IdP's certificates with their expiry and the
 * metadata URL's last refresh, a test sign-in (a real round trip through the IdP in this tab that
 * shows the NameID, the attributes and the account they map to, signing nobody in) and delete.
 *
 * @module
 */
import { useState } from "hono/jsx/dom";
import { api, ApiError, query } from "../api.ts";
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

const BASE = "/svc-admin/saml/connections";

/** A certificate of the IdP as the API shows it. */
interface Certificate {
  sha256: string;
  subject: string;
  notBefore: string;
  notAfter: string;
  expiresSoon: boolean;
  /** When `saml.certificate_expiring` was raised for it, or null. */
  expiryAnnouncedAt: string | null;
}

/** The last fetch of a connection's metadata URL. */
interface MetadataRefresh {
  attemptedAt: string;
  succeededAt: string | null;
  outcome: "updated" | "unchanged" | "failed";
  error: string | null;
}

function RefreshState(props: { refresh: MetadataRefresh | null }) {
  const r = props.refresh;
  if (r === null) return <span class="muted">not fetched again yet (svc fetches it again daily)</span>;
  return (
    <>
      last fetched <When at={r.attemptedAt} />: {r.outcome === "failed"
        ? (
          <>
            <span class="badge warn">failed</span> {r.error}; the certificates stored before are kept
            {r.succeededAt
              ? (
                <>
                  (last success <When at={r.succeededAt} />)
                </>
              )
              : null}
          </>
        )
        : r.outcome === "updated"
        ? "the certificates or SSO URL changed"
        : "unchanged"}
    </>
  );
}

/** Whether the administrator may change connections (realm-wide, or in its organization). */
function useCanManage(): boolean {
  const session = useSession();
  return session.can("saml:global:connections-manage") ||
    (session.profile.orgId !== null && session.can("saml:org:connections-manage"));
}

function ExpiresSoon(props: { certificates: readonly Certificate[] }) {
  const soon = props.certificates.filter((c) => c.expiresSoon).length;
  return soon > 0 ? <span class="badge warn">certificate expires soon</span> : null;
}

function Check(props: { name: string; label: string; hint?: string }) {
  return (
    <label class="check">
      <input type="checkbox" name={props.name} value="true" /> {props.label}
      {props.hint ? <small class="hint">{props.hint}</small> : null}
    </label>
  );
}

function CreateConnection(props: { onCreated: (id: string) => void }) {
  const form = useForm(async (values) => {
    const xml = (values.idpMetadataXml ?? "").trim();
    const url = (values.idpMetadataUrl ?? "").trim();
    if ((xml === "") === (url === "")) {
      throw new ApiError(
        400,
        "validation_failed",
        "Paste the IdP's metadata XML or give its URL (one of the two).",
      );
    }
    const orgId = await resolvePick("Organization", values.org, "org");
    const created = await api("POST", BASE, {
      orgId,
      displayName: values.displayName,
      ...(xml !== "" ? { idpMetadataXml: xml } : { idpMetadataUrl: url }),
      jitProvisioning: values.jitProvisioning === "true",
      allowIdpInitiated: values.allowIdpInitiated === "true",
      makeDefault: values.makeDefault === "true",
    });
    props.onCreated(created.id);
  });
  return (
    <form onSubmit={form.onSubmit} class="card" aria-labelledby="saml-new-h">
      <h2 id="saml-new-h">Add an identity provider</h2>
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
        placeholder="Acme Okta"
        error={form.fields.displayName}
      />
      <Field
        label="IdP metadata XML"
        name="idpMetadataXml"
        multiline
        rows={8}
        hint="Paste the IdP's metadata document, or leave empty and give its URL below."
        error={form.fields.idpMetadataXml}
      />
      <Field
        label="IdP metadata URL"
        name="idpMetadataUrl"
        type="url"
        placeholder="https://idp.example.com/metadata"
        error={form.fields.idpMetadataUrl}
      />
      <fieldset>
        <legend>Options</legend>
        <Check
          name="jitProvisioning"
          label="Create accounts on first sign-in (just in time)"
          hint="Only for emails in a domain the organization verified."
        />
        <Check name="allowIdpInitiated" label="Allow IdP-initiated sign-in" />
        <Check name="makeDefault" label="Make it the organization's default identity provider" />
      </fieldset>
      <FormError form={form} />
      <Submit form={form}>Add identity provider</Submit>
    </form>
  );
}

/** A test sign-in's result as the API shows it. */
interface TestSignInView {
  id: string;
  status: "pending" | "started" | "done";
  createdAt: string;
  completedAt: string | null;
  result: {
    nameId: string | null;
    nameIdFormat: string | null;
    attributes: { name: string; values: string[] }[];
    attributesTruncated: boolean;
    mapping:
      | { outcome: "existing_user"; user: { id: string; email: string | null; displayName: string | null } }
      | {
        outcome: "would_provision";
        wouldProvision: { email: string; displayName: string | null; attributes: Record<string, unknown> };
      }
      | { outcome: "refused"; reason: string };
  } | null;
}

function Mapping(props: { mapping: NonNullable<TestSignInView["result"]>["mapping"] }) {
  const m = props.mapping;
  if (m.outcome === "existing_user") {
    return (
      <p class="ok">
        Signs in as the existing user{" "}
        <a href={href(`/users/${m.user.id}`)}>{m.user.email ?? m.user.displayName ?? m.user.id}</a>.
      </p>
    );
  }
  if (m.outcome === "would_provision") {
    const attributes = Object.entries(m.wouldProvision.attributes);
    return (
      <p class="ok">
        Would create a new account (just in time) for <code>{m.wouldProvision.email}</code>
        {m.wouldProvision.displayName ? <>, named {m.wouldProvision.displayName}</> : null}
        {attributes.length > 0
          ? <>, with {attributes.map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(", ")}</>
          : null}. Nobody was created by this test.
      </p>
    );
  }
  return (
    <p>
      <span class="badge warn">refused</span> {m.reason}. A real sign-in with this answer would be refused.
    </p>
  );
}

/** Test sign-in: a real round trip in this tab, then what the IdP sent and who it maps to. */
function TestSignIn(props: { id: string }) {
  const path = `${BASE}/${encodeURIComponent(props.id)}/test-sign-in`;
  const latest = useLoad(() => api("GET", path), props.id);
  const start = useForm(async () => {
    // Back to this page after the round trip (same origin: an allowed returnTo).
    const started = await api("POST", path, { returnTo: location.href });
    location.assign(started.url);
  });
  return (
    <section class="card" aria-labelledby="saml-test-h">
      <h2 id="saml-test-h">Test sign-in</h2>
      <p>
        Signs in through the identity provider in this tab and comes back here with what it sent: the NameID,
        the attributes and the account they map to. No session is opened and nobody is created or linked; you
        stay signed in as yourself. Works before the connection is enabled.
      </p>
      <form onSubmit={start.onSubmit} class="actions" aria-label="Test sign-in">
        <Submit form={start}>Test sign-in</Submit>
      </form>
      <FormError form={start} />
      <Show loaded={latest}>
        {(data: { latest: TestSignInView | null }) => {
          const t = data.latest;
          if (t === null) return <p class="muted">No test in the last hour.</p>;
          if (t.result === null) {
            return (
              <p class="muted">
                The test started <When at={t.createdAt} /> has not come back from the identity provider.
              </p>
            );
          }
          const r = t.result;
          return (
            <div aria-labelledby="saml-test-result-h">
              <h3 id="saml-test-result-h">
                Last test, <When at={t.completedAt ?? t.createdAt} />
              </h3>
              <Mapping mapping={r.mapping} />
              <dl class="facts">
                <dt>NameID</dt>
                <dd>
                  {r.nameId === null
                    ? <span class="muted">— (the response was refused)</span>
                    : <code>{r.nameId}</code>}
                </dd>
                <dt>NameID format</dt>
                <dd>{r.nameIdFormat ? <code>{r.nameIdFormat}</code> : <span class="muted">—</span>}</dd>
              </dl>
              {r.attributes.length > 0
                ? (
                  <Table
                    rows={r.attributes}
                    caption="Attributes the identity provider sent"
                    columns={["Attribute", "Values"]}
                    row={(a) => (
                      <>
                        <td>
                          <code>{a.name}</code>
                        </td>
                        <td>{a.values.join(", ")}</td>
                      </>
                    )}
                  />
                )
                : <p class="muted">No attributes.</p>}
              {r.attributesTruncated
                ? (
                  <p class="muted">
                    Shortened: at most 50 attributes, 10 values each, 256 characters a value.
                  </p>
                )
                : null}
            </div>
          );
        }}
      </Show>
    </section>
  );
}

/** The SAML connections page. */
export function SamlConnections() {
  const canManage = useCanManage();
  const [offset, setOffset] = useState(0);
  const loaded = useLoad(() => api("GET", `${BASE}${query({ offset, limit: 20 })}`), String(offset));
  return (
    <Page title="SAML sign-in">
      <p>
        Each organization can sign in through its own SAML identity provider (Okta, Entra ID, Google
        Workspace, …). Add the provider here from its metadata, then give it the values shown on the
        connection's page.
      </p>
      <section class="card" aria-labelledby="saml-list-h">
        <h2 id="saml-list-h">Connections</h2>
        <Show loaded={loaded}>
          {(list) => (
            <PagedTable
              list={list}
              empty="No SAML connection yet."
              onPage={setOffset}
              columns={["Name", "Organization", "IdP", "State", "Certificates", "Created"]}
              row={(c: any) => (
                <>
                  <td>
                    <a href={href(`/saml/${c.id}`)}>{c.displayName}</a>
                  </td>
                  <td>
                    <Named kind="Organization" id={c.orgId} />
                  </td>
                  <td>
                    <code>{c.idpEntityId}</code>
                  </td>
                  <td>{c.enabled ? "enabled" : "disabled"}</td>
                  <td>
                    {c.certificates.length}
                    <ExpiresSoon certificates={c.certificates} />
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
      {canManage ? <CreateConnection onCreated={(id) => navigate(`/saml/${id}`)} /> : null}
    </Page>
  );
}

/** One SAML connection: what to give the IdP, its certificates, a test sign-in, delete. */
export function SamlConnectionDetail(props: { id: string }) {
  const canManage = useCanManage();
  const loaded = useLoad(() => api("GET", `${BASE}/${encodeURIComponent(props.id)}`), props.id);
  const [changed, setChanged] = useState<string | null>(null);
  const change = useForm(async (values) => {
    const body = values.action === "refresh"
      ? { refreshMetadata: true }
      : { enabled: values.action === "enable" };
    const after = await api("PATCH", `${BASE}/${encodeURIComponent(props.id)}`, body);
    setChanged(
      values.action === "refresh"
        ? `Metadata fetched again (${after.certificates.length} certificate(s)).`
        : after.enabled
        ? "Sign-in through this identity provider is enabled."
        : "Sign-in through this identity provider is disabled.",
    );
    loaded.reload();
  });
  const c = loaded.data;
  return (
    <Page title={c ? `SAML: ${c.displayName}` : "SAML connection"}>
      <p>
        <a href={href("/saml")}>All SAML connections</a>
      </p>
      <Show loaded={loaded}>
        {(c: any) => (
          <>
            <section class="card" aria-labelledby="saml-sp-h">
              <h2 id="saml-sp-h">Give these to the identity provider</h2>
              <CopyValue label="SP entity ID (Audience)" value={c.spEntityId} />
              <CopyValue label="ACS URL (Reply URL)" value={c.acsUrl} />
              <CopyValue label="SP metadata URL" value={c.metadataUrl} />
              <p class="muted">
                Most providers read everything from the metadata URL; others ask for the entity ID and the ACS
                URL (HTTP-POST binding). NameID: the user's email.
              </p>
            </section>
            <section class="card" aria-labelledby="saml-idp-h">
              <h2 id="saml-idp-h">Identity provider</h2>
              <dl class="facts">
                <dt>Organization</dt>
                <dd>
                  <Named kind="Organization" id={c.orgId} />
                </dd>
                <dt>IdP entity ID</dt>
                <dd>
                  <code>{c.idpEntityId}</code>
                </dd>
                <dt>Single sign-on URL</dt>
                <dd>{c.idpSsoUrl ? <code>{c.idpSsoUrl}</code> : <span class="muted">—</span>}</dd>
                <dt>Metadata</dt>
                <dd>
                  {c.idpMetadataUrl
                    ? (
                      <>
                        <code>{c.idpMetadataUrl}</code> (stored <When at={c.metadataFetchedAt} />)
                        <br />
                        <RefreshState refresh={c.metadataRefresh} />
                      </>
                    )
                    : "pasted"}
                </dd>
                <dt>Options</dt>
                <dd>
                  {c.enabled ? "enabled" : "disabled"}; accounts created on first sign-in:{" "}
                  {c.jitProvisioning ? "yes" : "no"}; IdP-initiated sign-in:{" "}
                  {c.allowIdpInitiated ? "allowed" : "no"}
                </dd>
              </dl>
              <h3>Signing certificates</h3>
              <Table
                rows={c.certificates as Certificate[]}
                caption="The IdP's signing certificates"
                columns={["Subject", "SHA-256", "Valid from", "Expires"]}
                row={(cert) => (
                  <>
                    <td>{cert.subject}</td>
                    <td>
                      <code class="id" title={cert.sha256}>{cert.sha256.slice(0, 16)}…</code>
                    </td>
                    <td>
                      <When at={cert.notBefore} />
                    </td>
                    <td>
                      <When at={cert.notAfter} />
                      {cert.expiresSoon ? <span class="badge warn">expires soon</span> : null}{" "}
                      {cert.expiryAnnouncedAt
                        ? (
                          <small class="hint">
                            saml.certificate_expiring raised <When at={cert.expiryAnnouncedAt} />
                          </small>
                        )
                        : null}
                    </td>
                  </>
                )}
              />
            </section>
            {canManage ? <TestSignIn id={c.id} /> : null}
            {canManage
              ? (
                <section class="card" aria-labelledby="saml-change-h">
                  <h2 id="saml-change-h">Change</h2>
                  {changed ? <p role="status" class="ok">{changed}</p> : null}
                  <form onSubmit={change.onSubmit} class="actions" aria-label="Enable or disable">
                    <input type="hidden" name="action" value={c.enabled ? "disable" : "enable"} />
                    <Submit form={change}>{c.enabled ? "Disable sign-in" : "Enable sign-in"}</Submit>
                  </form>
                  {c.idpMetadataUrl
                    ? (
                      <form onSubmit={change.onSubmit} class="actions" aria-label="Refresh metadata">
                        <input type="hidden" name="action" value="refresh" />
                        <Submit form={change}>Fetch the metadata again</Submit>
                      </form>
                    )
                    : null}
                  <FormError form={change} />
                </section>
              )
              : null}
            {canManage
              ? (
                <section class="card" aria-labelledby="saml-danger-h">
                  <h2 id="saml-danger-h">Delete</h2>
                  <ConfirmButton
                    label="Delete connection"
                    title={`Delete ${c.displayName}?`}
                    message="Sign-in through this identity provider stops at once. Accounts stay."
                    typed={c.displayName}
                    onConfirm={async () => {
                      await api("DELETE", `${BASE}/${encodeURIComponent(c.id)}`);
                      navigate("/saml");
                    }}
                  />
                </section>
              )
              : null}
          </>
        )}
      </Show>
    </Page>
  );
}
