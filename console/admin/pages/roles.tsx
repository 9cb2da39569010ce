/**
 * Roles and grants: the role list, creating a role with its grants (each with the condition
 * editor), a role's grants (add, remove) and its assignments (assign to a user, remove).
 *
 * @module
 */
import { useState } from "hono/jsx/dom";
import { api, query } from "../api.ts";
import { href, navigate } from "../router.ts";
import { useSession } from "../session.ts";
import {
  ConfirmButton,
  Empty,
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
import { ConditionEditor } from "./condition-editor.tsx";
import { jsonField } from "./common.ts";
import { Named, Picker, type PickKind, resolvePick } from "../picker.tsx";

/** Who a role is assigned to. */
const PRINCIPAL_KINDS: [PickKind, string][] = [["User", "User"], ["Group", "Group"], [
  "ServiceAccount",
  "Service account",
]];

function grantFrom(values: Record<string, string>, prefix: string) {
  const grant: Record<string, unknown> = {
    pattern: values[`${prefix}pattern`],
    effect: values[`${prefix}effect`] || "Allow",
  };
  const condition = jsonField(values[`${prefix}condition`], "condition");
  if (condition !== undefined) grant.condition = condition;
  const teams = (values[`${prefix}teamIds`] ?? "").split(",").map((t) => t.trim()).filter(Boolean);
  if (teams.length > 0) grant.teamIds = teams;
  return grant;
}

function GrantFields(props: { prefix: string; fields: Record<string, string>; at: string }) {
  const f = (name: string) => props.fields[`${props.at}.${name}`] ?? props.fields[name];
  return (
    <>
      <Field
        label="Permission pattern"
        name={`${props.prefix}pattern`}
        required
        placeholder="service:scope:action, e.g. docs:org:read"
        error={f("pattern")}
      />
      <Field label="Effect" name={`${props.prefix}effect`} options={["Allow", "Deny"]} value="Allow" />
      <Field
        label="Team IDs (comma-separated, optional)"
        name={`${props.prefix}teamIds`}
        error={f("teamIds")}
      />
      <ConditionEditor name={`${props.prefix}condition`} serverError={f("condition")} />
    </>
  );
}

function CreateRole(props: { onDone: () => void }) {
  const session = useSession();
  const [count, setCount] = useState(1);
  const form = useForm(async (values) => {
    const grants = Array.from({ length: count }, (_, i) => grantFrom(values, `g${i}.`)).filter((g) =>
      g.pattern
    );
    const body: Record<string, unknown> = { key: values.key, displayName: values.displayName, grants };
    if (values.org) body.orgId = await resolvePick("Organization", values.org, "org");
    else if (!session.isGlobal("roles-manage") && session.profile.orgId) body.orgId = session.profile.orgId;
    const role = await api("POST", "/svc-admin/roles", body);
    props.onDone();
    navigate(`/roles/${role.id}`);
  });
  return (
    <form onSubmit={form.onSubmit} class="card" aria-labelledby="create-role-h">
      <h2 id="create-role-h">Create a role with its grants</h2>
      <Field label="Key" name="key" required placeholder="editor" error={form.fields.key} />
      <Field label="Display name" name="displayName" required error={form.fields.displayName} />
      {session.isGlobal("roles-manage")
        ? (
          <Picker
            kind="Organization"
            label="Organization (empty: realm-wide)"
            name="org"
            error={form.fields.org ?? form.fields.orgId}
          />
        )
        : null}
      {Array.from({ length: count }, (_, i) => (
        <fieldset class="grant">
          <legend>Grant {i + 1}</legend>
          <GrantFields prefix={`g${i}.`} fields={form.fields} at={`grants.${i}`} />
        </fieldset>
      ))}
      <div class="actions">
        <button type="button" onClick={() => setCount(count + 1)}>Add another grant</button>
      </div>
      <FormError form={form} />
      <Submit form={form}>Create role</Submit>
    </form>
  );
}

/** The roles page. */
export function Roles() {
  const session = useSession();
  const [offset, setOffset] = useState(0);
  const loaded = useLoad(() => api("GET", `/svc-admin/roles${query({ offset, limit: 20 })}`), String(offset));
  return (
    <Page title="Roles and grants">
      <Show loaded={loaded}>
        {(list) => (
          <PagedTable
            list={list}
            empty="No role yet."
            onPage={setOffset}
            columns={["Role", "Key", "Scope", "Created"]}
            row={(r: any) => (
              <>
                <td>
                  <a href={href(`/roles/${r.id}`)}>{r.displayName}</a>
                </td>
                <td>
                  <code>{r.key}</code>
                </td>
                <td>
                  {r.orgId
                    ? (
                      <>
                        organization <Named kind="Organization" id={r.orgId} />
                      </>
                    )
                    : "realm"}
                </td>
                <td>
                  <When at={r.createdAt} />
                </td>
              </>
            )}
          />
        )}
      </Show>
      {session.canAny("roles-manage") ? <CreateRole onDone={loaded.reload} /> : null}
    </Page>
  );
}

function Assignments(props: { role: any; canManage: boolean }) {
  const loaded = useLoad(
    () => api("GET", `/svc-admin/role-assignments${query({ roleId: props.role.id })}`),
    props.role.id,
  );
  const [kind, setKind] = useState<PickKind>("User");
  const form = useForm(async (values, el) => {
    const principalKind = (values.principalKind || "User") as PickKind;
    const principalId = await resolvePick(principalKind, values.principal, "principal");
    const body: Record<string, unknown> = { roleId: props.role.id, principalKind, principalId };
    if (props.role.orgId) body.orgId = props.role.orgId;
    else if (values.org) body.orgId = await resolvePick("Organization", values.org, "org");
    await api("POST", "/svc-admin/role-assignments", body);
    el.reset();
    loaded.reload();
  });
  return (
    <section class="card" aria-labelledby="assign-h">
      <h2 id="assign-h">Assignments</h2>
      <Show loaded={loaded}>
        {(list) =>
          list.items.length === 0 ? <Empty>Not assigned to anyone.</Empty> : (
            <Table
              columns={["Principal", "Organization", "Since", ""]}
              rows={list.items as any[]}
              row={(a) => (
                <>
                  <td>
                    {a.principalKind === "User"
                      ? (
                        <a href={href(`/users/${a.principalId}`)}>
                          <Named kind="User" id={a.principalId} />
                        </a>
                      )
                      : (
                        <>
                          {a.principalKind === "Group" ? "Group " : "Service account "}
                          <Named kind={a.principalKind} id={a.principalId} />
                        </>
                      )}
                  </td>
                  <td>{a.orgId ? <Named kind="Organization" id={a.orgId} /> : "—"}</td>
                  <td>
                    <When at={a.createdAt} />
                  </td>
                  <td>
                    {props.canManage
                      ? (
                        <ConfirmButton
                          label="Remove"
                          title="Remove this assignment?"
                          message="The principal loses the role's grants."
                          onConfirm={async () => {
                            await api("DELETE", `/svc-admin/role-assignments/${a.id}`);
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
      {props.canManage
        ? (
          <form onSubmit={form.onSubmit} aria-label="Assign the role">
            <Field
              label="Assign to"
              name="principalKind"
              options={PRINCIPAL_KINDS}
              value={kind}
              onInput={(v) => setKind(v as PickKind)}
            />
            <Picker
              key={kind}
              kind={kind}
              label={kind === "User"
                ? "User (email or name)"
                : kind === "Group"
                ? "Group (key or name)"
                : "Service account (key or name)"}
              name="principal"
              required
              error={form.fields.principal ?? form.fields.principalId}
            />
            {props.role.orgId ? null : (
              <Picker
                kind="Organization"
                label="In organization (optional)"
                name="org"
                error={form.fields.org ?? form.fields.orgId}
              />
            )}
            <FormError form={form} />
            <Submit form={form}>Assign role</Submit>
          </form>
        )
        : null}
    </section>
  );
}

/** A role's page. */
export function RoleDetail(props: { id: string }) {
  const session = useSession();
  const loaded = useLoad(() => api("GET", `/svc-admin/roles/${props.id}`), props.id);
  const canManage = session.canAny("roles-manage");
  const add = useForm(async (values, el) => {
    await api("POST", `/svc-admin/roles/${props.id}/grants`, grantFrom(values, "n."));
    el.reset();
    loaded.reload();
  });
  return (
    <Page title="Role">
      <p>
        <a href={href("/roles")}>← All roles</a>
      </p>
      <Show loaded={loaded}>
        {(role) => (
          <>
            <h2 class="subject">
              {role.displayName} <code>{role.key}</code>
            </h2>
            <p>
              {role.orgId
                ? (
                  <>
                    Organization role (<Named kind="Organization" id={role.orgId} />)
                  </>
                )
                : "Realm role"}
            </p>
            <section class="card" aria-labelledby="grants-h">
              <h2 id="grants-h">Grants</h2>
              {role.grants.length === 0 ? <Empty>No grant.</Empty> : (
                <Table
                  columns={["Pattern", "Effect", "Condition", "Teams", ""]}
                  rows={role.grants as any[]}
                  row={(g) => (
                    <>
                      <td>
                        <code>{g.pattern}</code>
                      </td>
                      <td>{g.effect}</td>
                      <td>{g.condition ? <pre class="json">{JSON.stringify(g.condition)}</pre> : "—"}</td>
                      <td>{g.teamIds.join(", ") || "—"}</td>
                      <td>
                        {canManage
                          ? (
                            <ConfirmButton
                              label="Remove"
                              title="Remove this grant?"
                              message={<code>{g.pattern}</code>}
                              onConfirm={async () => {
                                await api("DELETE", `/svc-admin/roles/${role.id}/grants/${g.id}`);
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
              {canManage
                ? (
                  <form onSubmit={add.onSubmit} aria-label="Add a grant">
                    <h3>Add a grant</h3>
                    <GrantFields prefix="n." fields={add.fields} at="" />
                    <FormError form={add} />
                    <Submit form={add}>Add grant</Submit>
                  </form>
                )
                : null}
            </section>
            <Assignments role={role} canManage={canManage} />
            {canManage
              ? (
                <ConfirmButton
                  label="Delete role"
                  title={`Delete the role ${role.key}?`}
                  message="Its grants and assignments go with it."
                  typed={role.key}
                  onConfirm={async () => {
                    await api("DELETE", `/svc-admin/roles/${role.id}`);
                    navigate("/roles");
                  }}
                />
              )
              : null}
          </>
        )}
      </Show>
    </Page>
  );
}
