/**
 * SAML sign-in (the `saml` plugin): an organization's identity providers. The list; a new
 * connection from the IdP's metadata, pasted or by URL; a connection's page with the values to
 * give the IdP (each with a copy button), the IdP's certificates with their expiry, a test
 * sign-in (a real round trip through the IdP, in a new tab) and delete.
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
  // Back to this page after the round trip through the IdP (same origin: an allowed returnTo).
  const returnTo = location.href;
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
                      {cert.expiresSoon ? <span class="badge warn">expires soon</span> : null}
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
            <section class="card" aria-labelledby="saml-test-h">
              <h2 id="saml-test-h">Test sign-in</h2>
              <p>
                Signs in through the identity provider in a new tab, as the person signed in there, and comes
                back to this page. That tab shares this browser's cookies: the browser then holds that
                person's session, not yours. Use a private window (open this page there and sign in to the
                console first), or sign in again afterwards.
              </p>
              <p>
                <a
                  href={`${c.startUrl}?returnTo=${encodeURIComponent(returnTo)}`}
                  target="_blank"
                  rel="noopener noreferrer"
                >
                  Test sign-in (opens a new tab)
                </a>
              </p>
            </section>
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
