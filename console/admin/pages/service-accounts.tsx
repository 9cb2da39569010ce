/**
 * Service accounts and API keys: create (secrets shown once, with copy), rotate, disable or
 * enable, delete; API keys of users or service accounts, created (token shown once) and revoked.
 *
 * @module
 */
import { useState } from "hono/jsx/dom";
import { api, query } from "../api.ts";
import { useSession } from "../session.ts";
import {
  ConfirmButton,
  Field,
  FormError,
  Page,
  PagedTable,
  SecretOnce,
  Show,
  Submit,
  useForm,
  useLoad,
  When,
} from "../ui.tsx";
import { Named, Picker, type PickKind, resolvePick } from "../picker.tsx";

/** Whose API key the form makes: set by a service account's "Create API key". */
interface KeyOwner {
  readonly kind: "User" | "ServiceAccount";
  readonly handle: string;
}

function Accounts(
  props: { onSecret: (label: string, value: string) => void; onCreateKey: (owner: KeyOwner) => void },
) {
  const session = useSession();
  const canManage = session.isGlobal("service-accounts-manage");
  const [offset, setOffset] = useState(0);
  const loaded = useLoad(
    () => api("GET", `/svc-admin/service-accounts${query({ offset, limit: 20 })}`),
    String(offset),
  );
  const form = useForm(async (values, el) => {
    const created = await api("POST", "/svc-admin/service-accounts", {
      key: values.key,
      displayName: values.displayName,
    });
    props.onSecret(`Secret of ${created.key}`, created.secret);
    el.reset();
    loaded.reload();
  });
  return (
    <section class="card" aria-labelledby="sa-h">
      <h2 id="sa-h">Service accounts</h2>
      <Show loaded={loaded}>
        {(list) => (
          <PagedTable
            list={list}
            empty="No service account."
            onPage={setOffset}
            columns={["Key", "Name", "ID", "State", "Created", ""]}
            row={(a: any) => (
              <>
                <td>
                  <code>{a.key}</code>
                </td>
                <td>{a.displayName}</td>
                <td>
                  <code class="id" title={a.id}>{a.id}</code>
                </td>
                <td>{a.disabled ? "disabled" : "enabled"}</td>
                <td>
                  <When at={a.createdAt} />
                </td>
                <td class="row-actions">
                  {canManage
                    ? (
                      <>
                        {session.canAny("api-keys-manage")
                          ? (
                            <button
                              type="button"
                              aria-label={`Create API key for ${a.key}`}
                              onClick={() => props.onCreateKey({ kind: "ServiceAccount", handle: a.key })}
                            >
                              Create API key
                            </button>
                          )
                          : null}
                        <button
                          type="button"
                          onClick={async () => {
                            const r = await api(
                              "POST",
                              `/svc-admin/service-accounts/${a.id}/rotate-secret`,
                              {},
                            );
                            props.onSecret(`New secret of ${r.key}`, r.secret);
                            loaded.reload();
                          }}
                        >
                          Rotate secret
                        </button>
                        <button
                          type="button"
                          onClick={async () => {
                            await api(
                              "POST",
                              `/svc-admin/service-accounts/${a.id}/${a.disabled ? "enable" : "disable"}`,
                              {},
                            );
                            loaded.reload();
                          }}
                        >
                          {a.disabled ? "Enable" : "Disable"}
                        </button>
                        <ConfirmButton
                          label="Delete"
                          title={`Delete ${a.key}?`}
                          message="Its secret and API keys stop working."
                          typed={a.key}
                          onConfirm={async () => {
                            await api("DELETE", `/svc-admin/service-accounts/${a.id}`);
                            loaded.reload();
                          }}
                        />
                      </>
                    )
                    : null}
                </td>
              </>
            )}
          />
        )}
      </Show>
      {canManage
        ? (
          <form onSubmit={form.onSubmit} aria-label="Create a service account">
            <h3>Create a service account</h3>
            <Field label="Key" name="key" required placeholder="billing-sync" error={form.fields.key} />
            <Field label="Display name" name="displayName" required error={form.fields.displayName} />
            <FormError form={form} />
            <Submit form={form}>Create service account</Submit>
          </form>
        )
        : null}
    </section>
  );
}

function ApiKeys(props: { onSecret: (label: string, value: string) => void; owner: KeyOwner | null }) {
  const session = useSession();
  const canManage = session.canAny("api-keys-manage");
  const [offset, setOffset] = useState(0);
  const loaded = useLoad(
    () => api("GET", `/svc-admin/api-keys${query({ offset, limit: 20 })}`),
    String(offset),
  );
  const [kind, setKind] = useState<KeyOwner["kind"]>(props.owner?.kind ?? "User");
  const form = useForm(async (values, el) => {
    const ownerId = await resolvePick(values.ownerKind as PickKind, values.owner, "owner");
    const body: Record<string, unknown> = { ownerKind: values.ownerKind, ownerId, name: values.name };
    if (values.expiresAt) body.expiresAt = new Date(values.expiresAt).toISOString();
    const created = await api("POST", "/svc-admin/api-keys", body);
    props.onSecret(`API key ${created.name}`, created.token);
    el.reset();
    loaded.reload();
  });
  return (
    <section class="card" aria-labelledby="ak-h">
      <h2 id="ak-h">API keys</h2>
      <Show loaded={loaded}>
        {(list) => (
          <PagedTable
            list={list}
            empty="No API key."
            onPage={setOffset}
            columns={["Name", "Owner", "State", "Last used", "Expires", ""]}
            row={(k: any) => (
              <>
                <td>{k.name}</td>
                <td>
                  {k.ownerKind === "ServiceAccount" ? "Service account " : ""}
                  <Named kind={k.ownerKind} id={k.ownerId} />
                </td>
                <td>{k.active ? "active" : k.revokedAt ? "revoked" : "expired"}</td>
                <td>
                  <When at={k.lastUsedAt} />
                </td>
                <td>
                  <When at={k.expiresAt} />
                </td>
                <td>
                  {canManage && k.active
                    ? (
                      <ConfirmButton
                        label="Revoke"
                        title={`Revoke ${k.name}?`}
                        message="Requests with this key are refused from now on."
                        onConfirm={async () => {
                          await api("POST", `/svc-admin/api-keys/${k.id}/revoke`, {});
                          loaded.reload();
                        }}
                      />
                    )
                    : null}
                </td>
              </>
            )}
          />
        )}
      </Show>
      {canManage
        ? (
          <form onSubmit={form.onSubmit} aria-label="Create an API key" id="create-api-key">
            <h3>Create an API key</h3>
            <Field
              label="Owner kind"
              name="ownerKind"
              options={session.isGlobal("service-accounts-read")
                ? [["User", "User"], ["ServiceAccount", "Service account"]]
                : [["User", "User"]]}
              value={kind}
              onInput={(v) => setKind(v as KeyOwner["kind"])}
            />
            <Picker
              key={`${kind}:${props.owner?.handle ?? ""}`}
              kind={kind}
              label={kind === "User" ? "Owner (user email or name)" : "Owner (service account key or name)"}
              name="owner"
              required
              value={props.owner?.kind === kind ? props.owner.handle : undefined}
              error={form.fields.owner ?? form.fields.ownerId}
            />
            <Field label="Name" name="name" required error={form.fields.name} />
            <Field
              label="Expires (optional)"
              name="expiresAt"
              type="datetime-local"
              error={form.fields.expiresAt}
            />
            <FormError form={form} />
            <Submit form={form}>Create API key</Submit>
          </form>
        )
        : null}
    </section>
  );
}

/** The service accounts and API keys page. */
export function ServiceAccounts() {
  const session = useSession();
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const [owner, setOwner] = useState<KeyOwner | null>(null);
  const onSecret = (label: string, value: string) => setSecret({ label, value });
  const onCreateKey = (o: KeyOwner) => {
    setOwner(o);
    // The API key form, its owner filled in: focus its name.
    setTimeout(() => {
      const name = document.querySelector<HTMLInputElement>('#create-api-key input[name="name"]');
      name?.scrollIntoView({ block: "center" });
      name?.focus();
    }, 0);
  };
  return (
    <Page title="Service accounts and API keys">
      {secret ? <SecretOnce label={secret.label} value={secret.value} /> : null}
      {session.isGlobal("service-accounts-read")
        ? <Accounts onSecret={onSecret} onCreateKey={onCreateKey} />
        : null}
      {session.canAny("api-keys-read")
        ? <ApiKeys key={owner ? `${owner.kind}:${owner.handle}` : ""} onSecret={onSecret} owner={owner} />
        : null}
    </Page>
  );
}
