/**
 * Organizations: list and create; an organization's members (stable order, paged), domains
 * with their verification state, and roles.
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
import { Named, Picker, resolvePick } from "../picker.tsx";

/** The organizations page (an organization administrator goes straight to its own). */
export function Organizations() {
  const session = useSession();
  const [search, setSearch] = useState({ q: "", offset: 0 });
  const global = session.isGlobal("orgs-read");
  const loaded = useLoad(
    () =>
      global
        ? api(
          "GET",
          `/svc-admin/organizations${query({ search: search.q, offset: search.offset, limit: 20 })}`,
        )
        : api("GET", `/svc-admin/organizations/${session.profile.orgId}`).then((o) => ({
          items: [o],
          offset: 0,
          limit: 20,
          total: 1,
        })),
    JSON.stringify(search),
  );
  const find = useForm((values) => Promise.resolve(setSearch({ q: values.q ?? "", offset: 0 })));
  const create = useForm(async (values) => {
    const org = await api("POST", "/svc-admin/organizations", {
      name: values.name,
      displayName: values.displayName,
    });
    navigate(`/organizations/${org.id}`);
  });
  return (
    <Page title="Organizations">
      {global
        ? (
          <form onSubmit={find.onSubmit} class="toolbar" role="search" aria-label="Search organizations">
            <Field label="Search" name="q" type="search" value={search.q} />
            <button type="submit">Search</button>
          </form>
        )
        : null}
      <Show loaded={loaded}>
        {(list) => (
          <PagedTable
            list={list}
            empty="No organization."
            onPage={(offset) => setSearch({ ...search, offset })}
            columns={["Organization", "Name", "Status", "Created"]}
            row={(o: any) => (
              <>
                <td>
                  <a href={href(`/organizations/${o.id}`)}>{o.displayName}</a>
                </td>
                <td>
                  <code>{o.name}</code>
                </td>
                <td>{o.status}</td>
                <td>
                  <When at={o.createdAt} />
                </td>
              </>
            )}
          />
        )}
      </Show>
      {session.isGlobal("orgs-manage")
        ? (
          <form onSubmit={create.onSubmit} class="card" aria-labelledby="create-org-h">
            <h2 id="create-org-h">Create an organization</h2>
            <Field label="Name (slug)" name="name" required placeholder="acme" error={create.fields.name} />
            <Field label="Display name" name="displayName" required error={create.fields.displayName} />
            <FormError form={create} />
            <Submit form={create}>Create organization</Submit>
          </form>
        )
        : null}
    </Page>
  );
}

function Members(props: { orgId: string; canManage: boolean }) {
  const [offset, setOffset] = useState(0);
  const loaded = useLoad(
    () => api("GET", `/svc-admin/organizations/${props.orgId}/members${query({ offset, limit: 20 })}`),
    `${props.orgId}:${offset}`,
  );
  const add = useForm(async (values, el) => {
    await api("POST", `/svc-admin/organizations/${props.orgId}/members`, {
      userId: await resolvePick("User", values.user, "user"),
    });
    el.reset();
    loaded.reload();
  });
  return (
    <section class="card" aria-labelledby="members-h">
      <h2 id="members-h">Members</h2>
      <Show loaded={loaded}>
        {(list) => (
          <PagedTable
            list={list}
            empty="No member."
            onPage={setOffset}
            columns={["User", "Joined", ""]}
            row={(m: any) => (
              <>
                <td>
                  <a href={href(`/users/${m.userId}`)}>
                    <Named kind="User" id={m.userId} />
                  </a>
                </td>
                <td>
                  <When at={m.joinedAt} />
                </td>
                <td>
                  {props.canManage
                    ? (
                      <ConfirmButton
                        label="Remove"
                        title="Remove this member?"
                        message="The user leaves the organization and its teams."
                        onConfirm={async () => {
                          await api(
                            "DELETE",
                            `/svc-admin/organizations/${props.orgId}/members/${m.userId}`,
                          );
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
          <form onSubmit={add.onSubmit} aria-label="Add a member">
            <Picker
              kind="User"
              label="User (email or name)"
              name="user"
              required
              error={add.fields.user ?? add.fields.userId}
            />
            <FormError form={add} />
            <Submit form={add}>Add member</Submit>
          </form>
        )
        : null}
    </section>
  );
}

function Domains(props: { orgId: string; canManage: boolean }) {
  const loaded = useLoad(
    () => api("GET", `/svc-admin/organizations/${props.orgId}/domains?limit=100`),
    props.orgId,
  );
  const [verifyError, setVerifyError] = useState<string | null>(null);
  const add = useForm(async (values, el) => {
    await api("POST", `/svc-admin/organizations/${props.orgId}/domains`, { value: values.value });
    el.reset();
    loaded.reload();
  });
  return (
    <section class="card" aria-labelledby="domains-h">
      <h2 id="domains-h">Domains</h2>
      {verifyError ? <p class="error" role="alert">{verifyError}</p> : null}
      <Show loaded={loaded}>
        {(list) =>
          list.items.length === 0 ? <Empty>No domain.</Empty> : (
            <Table
              columns={["Domain", "State", "Proof (TXT record)", ""]}
              rows={list.items as any[]}
              row={(d) => (
                <>
                  <td>
                    {d.value} <small class="muted">({d.kind})</small>
                  </td>
                  <td>{d.verified ? <strong class="ok">verified</strong> : "not verified"}</td>
                  <td>
                    {d.verificationRecord
                      ? <code>{d.verificationRecord.name} TXT {d.verificationRecord.value}</code>
                      : "—"}
                  </td>
                  <td>
                    {props.canManage && !d.verified
                      ? (
                        <button
                          type="button"
                          onClick={async () => {
                            setVerifyError(null);
                            try {
                              await api(
                                "POST",
                                `/svc-admin/organizations/${props.orgId}/domains/${d.id}/verify`,
                                {},
                              );
                            } catch (error) {
                              setVerifyError(`${d.value}: ${(error as Error).message}`);
                            }
                            loaded.reload();
                          }}
                        >
                          Verify
                        </button>
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
          <form onSubmit={add.onSubmit} aria-label="Add a domain">
            <Field label="Domain" name="value" required placeholder="example.com" error={add.fields.value} />
            <FormError form={add} />
            <Submit form={add}>Add domain</Submit>
          </form>
        )
        : null}
    </section>
  );
}

function OrgRoles(props: { orgId: string }) {
  const loaded = useLoad(
    () => api("GET", `/svc-admin/roles${query({ orgId: props.orgId, limit: 100 })}`),
    props.orgId,
  );
  return (
    <section class="card" aria-labelledby="oroles-h">
      <h2 id="oroles-h">Roles</h2>
      <Show loaded={loaded}>
        {(list) =>
          list.items.length === 0 ? <Empty>No role in this organization.</Empty> : (
            <ul class="plain">
              {(list.items as any[]).map((r) => (
                <li>
                  <a href={href(`/roles/${r.id}`)}>{r.displayName}</a> <code>{r.key}</code>
                </li>
              ))}
            </ul>
          )}
      </Show>
    </section>
  );
}

/** An organization's page. */
export function OrganizationDetail(props: { id: string }) {
  const session = useSession();
  const loaded = useLoad(() => api("GET", `/svc-admin/organizations/${props.id}`), props.id);
  return (
    <Page title="Organization">
      <p>
        <a href={href("/organizations")}>← Organizations</a>
      </p>
      <Show loaded={loaded}>
        {(org) => (
          <>
            <h2 class="subject">
              {org.displayName} <code>{org.name}</code>
            </h2>
            <p>
              Status {org.status}; ID <code>{org.id}</code>
            </p>
            {session.canAny("members-read")
              ? <Members orgId={org.id} canManage={session.canAny("members-manage")} />
              : null}
            <Domains orgId={org.id} canManage={session.canAny("orgs-manage")} />
            {session.canAny("roles-read") ? <OrgRoles orgId={org.id} /> : null}
          </>
        )}
      </Show>
    </Page>
  );
}
