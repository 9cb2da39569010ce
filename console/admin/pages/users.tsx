/**
 * Users: search, create, invite; a user's detail with profile, attributes, organizations,
 * roles, sessions (remote logout), factor reset, suspend/reactivate and erasure (typed
 * confirmation).
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
import { jsonField } from "./common.ts";

const PAGE = 20;

function CreateUser(props: { onDone: () => void }) {
  const form = useForm(async (values, el) => {
    const body: Record<string, unknown> = { email: values.email };
    if (values.displayName) body.displayName = values.displayName;
    if (values.password) body.password = values.password;
    const user = await api("POST", "/svc-admin/users", body);
    el.reset();
    props.onDone();
    navigate(`/users/${user.id}`);
  });
  return (
    <form onSubmit={form.onSubmit} class="card" aria-labelledby="create-user-h">
      <h2 id="create-user-h">Create a user</h2>
      <Field label="Email" name="email" type="email" required error={form.fields.email} />
      <Field label="Display name" name="displayName" error={form.fields.displayName} />
      <Field
        label="Password"
        name="password"
        type="password"
        autocomplete="new-password"
        hint="Leave empty for a password-less user you invite."
        error={form.fields.password}
      />
      <FormError form={form} />
      <Submit form={form}>Create user</Submit>
    </form>
  );
}

function InviteUser(props: { onDone: () => void }) {
  const session = useSession();
  const [sent, setSent] = useState<string | null>(null);
  const form = useForm(async (values, el) => {
    const body: Record<string, unknown> = { email: values.email };
    if (values.displayName) body.displayName = values.displayName;
    if (values.org) body.orgId = await resolvePick("Organization", values.org, "org");
    const invitation = await api("POST", "/svc-admin/users/invite", body);
    setSent(
      `Invitation sent to ${invitation.email}; it expires ${
        new Date(invitation.expiresAt).toLocaleString()
      }.`,
    );
    el.reset();
    props.onDone();
  });
  return (
    <form onSubmit={form.onSubmit} class="card" aria-labelledby="invite-h">
      <h2 id="invite-h">Invite a user</h2>
      <Field label="Email" name="email" type="email" required error={form.fields.email} />
      <Field label="Display name" name="displayName" error={form.fields.displayName} />
      {session.isGlobal("users-invite")
        ? (
          <Picker
            kind="Organization"
            label="Organization (optional)"
            name="org"
            error={form.fields.org ?? form.fields.orgId}
          />
        )
        : null}
      <FormError form={form} />
      {sent ? <p role="status" class="ok">{sent}</p> : null}
      <Submit form={form}>Send invitation</Submit>
    </form>
  );
}

/** The users page. */
export function Users() {
  const session = useSession();
  const [search, setSearch] = useState({ q: "", status: "", offset: 0 });
  const loaded = useLoad(
    () =>
      api(
        "GET",
        `/svc-admin/users${
          query({ q: search.q, status: search.status, offset: search.offset, limit: PAGE })
        }`,
      ),
    JSON.stringify(search),
  );
  const form = useForm((values) =>
    Promise.resolve(setSearch({ q: values.q ?? "", status: values.status ?? "", offset: 0 }))
  );
  return (
    <Page title="Users">
      <form onSubmit={form.onSubmit} class="toolbar" role="search" aria-label="Search users">
        <Field label="Search" name="q" type="search" value={search.q} placeholder="email or name" />
        <Field
          label="Status"
          name="status"
          value={search.status}
          options={[["", "Any"], ["Active", "Active or invited"], "Suspended"]}
        />
        <button type="submit">Search</button>
      </form>
      <Show loaded={loaded}>
        {(list) => (
          <PagedTable
            list={list}
            empty="No user matches."
            caption="Users"
            columns={["Email", "Name", "Status", "Created"]}
            onPage={(offset) => setSearch({ ...search, offset })}
            row={(u: any) => (
              <>
                <td>
                  <a href={href(`/users/${u.id}`)}>{u.email}</a>
                  {u.isBreakGlass ? <span class="badge">break-glass</span> : null}
                </td>
                <td>{u.displayName ?? ""}</td>
                <td>{u.status === "Active" && u.invitationPending ? "Invited" : u.status}</td>
                <td>
                  <When at={u.createdAt} />
                </td>
              </>
            )}
          />
        )}
      </Show>
      <div class="columns">
        {session.isGlobal("users-manage") ? <CreateUser onDone={loaded.reload} /> : null}
        {session.canAny("users-invite") ? <InviteUser onDone={loaded.reload} /> : null}
      </div>
    </Page>
  );
}

function ProfileCard(props: { user: any; onSaved: () => void; canManage: boolean }) {
  const { user } = props;
  const [saved, setSaved] = useState(false);
  const form = useForm(async (values) => {
    setSaved(false);
    const body: Record<string, unknown> = {
      displayName: values.displayName === "" ? null : values.displayName,
      attributes: jsonField(values.attributes, "attributes") ?? {},
    };
    if (values.email !== user.email) body.email = values.email;
    await api("PATCH", `/svc-admin/users/${user.id}`, body);
    setSaved(true);
    props.onSaved();
  });
  return (
    <form onSubmit={form.onSubmit} class="card" aria-labelledby="profile-h">
      <h2 id="profile-h">Profile</h2>
      <dl class="facts">
        <dt>ID</dt>
        <dd>
          <code>{user.id}</code>
        </dd>
        <dt>Status</dt>
        <dd data-status>{user.status === "Active" && user.invitationPending ? "Invited" : user.status}</dd>
        <dt>Email verified</dt>
        <dd>{user.emailVerified ? "yes" : "no"}</dd>
        <dt>Created</dt>
        <dd>
          <When at={user.createdAt} />
        </dd>
      </dl>
      <fieldset disabled={!props.canManage}>
        <legend class="sr-only">Editable profile</legend>
        <Field
          label="Email"
          name="email"
          type="email"
          value={user.email}
          required
          error={form.fields.email}
        />
        <Field
          label="Display name"
          name="displayName"
          value={user.displayName ?? ""}
          error={form.fields.displayName}
        />
        <Field
          label="Attributes (JSON)"
          name="attributes"
          multiline
          rows={4}
          value={JSON.stringify(user.attributes ?? {}, null, 2)}
          error={form.fields.attributes}
        />
        <FormError form={form} />
        {saved ? <p role="status" class="ok">Saved.</p> : null}
        {props.canManage ? <Submit form={form}>Save profile</Submit> : null}
      </fieldset>
    </form>
  );
}

function Sessions(props: { userId: string; canManage: boolean }) {
  const loaded = useLoad(
    () => api("GET", `/svc-admin/users/${props.userId}/sessions?limit=50`),
    props.userId,
  );
  return (
    <section class="card" aria-labelledby="sessions-h">
      <h2 id="sessions-h">Sessions</h2>
      <Show loaded={loaded}>
        {(list) =>
          list.items.length === 0 ? <Empty>No active session.</Empty> : (
            <Table
              columns={["Device", "IP", "Last seen", "MFA", ""]}
              rows={list.items as any[]}
              row={(s) => (
                <>
                  <td>
                    {s.deviceDescription ?? "unknown device"}
                    {s.impersonation ? " (impersonation)" : ""}
                  </td>
                  <td>{s.ipAddress ?? "—"}</td>
                  <td>
                    <When at={s.lastSeenAt} />
                  </td>
                  <td>{s.mfa}</td>
                  <td>
                    {props.canManage
                      ? (
                        <ConfirmButton
                          label="Sign out"
                          title="End this session?"
                          message="The device is signed out at once."
                          confirmLabel="End session"
                          onConfirm={async () => {
                            await api("DELETE", `/svc-admin/users/${props.userId}/sessions/${s.id}`);
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
    </section>
  );
}

function FactorReset(props: { userId: string }) {
  const [done, setDone] = useState<string | null>(null);
  const form = useForm(async (values) => {
    const factors = (values.factors ?? "").split(",").filter(Boolean);
    const report = await api("POST", `/svc-admin/users/${props.userId}/factors/reset`, {
      reason: values.reason,
      ...(factors.length > 0 ? { factors } : {}),
    });
    setDone(
      `Reset: TOTP ${report.removed.totp ? "removed" : "none"}, email OTP ${
        report.removed.emailOtp ? "removed" : "none"
      }, ${report.removed.passkeys} passkeys, ${report.removed.recoveryCodes} recovery codes.`,
    );
  });
  return (
    <form onSubmit={form.onSubmit} class="card" aria-labelledby="factors-h">
      <h2 id="factors-h">Factors</h2>
      <fieldset>
        <legend>Factors to reset (none checked: all)</legend>
        {["totp", "email_otp", "passkeys", "recovery_codes"].map((f) => (
          <label class="check">
            <input type="checkbox" name="factors" value={f} /> {f}
          </label>
        ))}
      </fieldset>
      <Field label="Reason" name="reason" required error={form.fields.reason} />
      <FormError form={form} />
      {done ? <p role="status" class="ok">{done}</p> : null}
      <Submit form={form} danger>Reset factors</Submit>
    </form>
  );
}

function UserRoles(props: { userId: string }) {
  const loaded = useLoad(async () => {
    const list = await api(
      "GET",
      `/svc-admin/role-assignments${query({ principalKind: "User", principalId: props.userId })}`,
    );
    const roles = await Promise.all(
      (list.items as any[]).map((a) =>
        api("GET", `/svc-admin/roles/${a.roleId}`).catch(() => ({ key: a.roleId }))
      ),
    );
    return (list.items as any[]).map((a, i) => ({ ...a, role: roles[i] }));
  }, props.userId);
  return (
    <section class="card" aria-labelledby="uroles-h">
      <h2 id="uroles-h">Roles</h2>
      <Show loaded={loaded}>
        {(items) =>
          items.length === 0 ? <Empty>No role assigned.</Empty> : (
            <ul class="plain">
              {items.map((a: any) => (
                <li>
                  <a href={href(`/roles/${a.roleId}`)}>{a.role.displayName ?? a.role.key}</a>
                  {a.orgId
                    ? (
                      <>
                        in organization <Named kind="Organization" id={a.orgId} />
                      </>
                    )
                    : null}
                </li>
              ))}
            </ul>
          )}
      </Show>
    </section>
  );
}

function SecurityEvents(props: { userId: string }) {
  const loaded = useLoad(
    () => api("GET", `/svc-admin/users/${props.userId}/security-events?limit=20`),
    props.userId,
  );
  return (
    <section class="card" aria-labelledby="secev-h">
      <h2 id="secev-h">Security events</h2>
      <Show loaded={loaded}>
        {(d) =>
          d.events.length === 0 ? <Empty>No security event.</Empty> : (
            <Table
              columns={["Event", "When", "IP", "Device"]}
              rows={d.events as any[]}
              row={(e) => (
                <>
                  <td>
                    <code>{e.kind}</code>
                  </td>
                  <td>
                    <When at={e.occurredAt} />
                  </td>
                  <td>{e.ipAddress ?? "—"}</td>
                  <td>{e.deviceDescription ?? "—"}</td>
                </>
              )}
            />
          )}
      </Show>
    </section>
  );
}

/** A user's page. */
export function UserDetail(props: { id: string }) {
  const session = useSession();
  const loaded = useLoad(() => api("GET", `/svc-admin/users/${props.id}?expand=organizations`), props.id);
  const [erased, setErased] = useState<any>(null);
  const canManage = session.canAny("users-manage");
  return (
    <Page title="User">
      <p>
        <a href={href("/users")}>← All users</a>
      </p>
      {erased
        ? (
          <div class="card" role="status">
            <h2>Erased</h2>
            <pre class="json">{JSON.stringify(erased, null, 2)}</pre>
          </div>
        )
        : null}
      <Show loaded={loaded}>
        {(user) => (
          <>
            <h2 class="subject">{user.email}</h2>
            <div class="actions">
              {canManage && user.status === "Active"
                ? (
                  <ConfirmButton
                    label="Suspend"
                    title={`Suspend ${user.email}?`}
                    message="Every session ends at once; refresh tokens and API keys are revoked."
                    reason
                    onConfirm={async (reason) => {
                      await api("POST", `/svc-admin/users/${user.id}/suspend`, { reason });
                      loaded.reload();
                    }}
                  />
                )
                : null}
              {canManage && user.status === "Suspended"
                ? (
                  <button
                    type="button"
                    onClick={async () => {
                      await api("POST", `/svc-admin/users/${user.id}/reactivate`, {});
                      loaded.reload();
                    }}
                  >
                    Reactivate
                  </button>
                )
                : null}
              {session.isGlobal("users-erase") && user.anonymizedAt === null
                ? (
                  <ConfirmButton
                    label="Erase"
                    title={`Erase ${user.email}?`}
                    message="Erasure cannot be undone: personal data, credentials and sessions are destroyed."
                    typed={user.email}
                    confirmLabel="Erase for good"
                    onConfirm={async () => {
                      setErased(await api("POST", `/svc-admin/users/${user.id}/erase`));
                      loaded.reload();
                    }}
                  />
                )
                : null}
            </div>
            <div class="columns">
              <ProfileCard user={user} onSaved={loaded.reload} canManage={canManage} />
              <div>
                <section class="card" aria-labelledby="uorgs-h">
                  <h2 id="uorgs-h">Organizations</h2>
                  {(user.organizations ?? []).length === 0
                    ? <Empty>No organization.</Empty>
                    : (
                      <ul class="plain">
                        {(user.organizations as any[]).map((o) => (
                          <li>
                            <a href={href(`/organizations/${o.id}`)}>{o.displayName}</a>{" "}
                            (<code>{o.name}</code>)
                          </li>
                        ))}
                      </ul>
                    )}
                </section>
                {session.canAny("roles-read") ? <UserRoles userId={user.id} /> : null}
              </div>
            </div>
            <Sessions userId={user.id} canManage={canManage} />
            <SecurityEvents userId={user.id} />
            {canManage ? <FactorReset userId={user.id} /> : null}
          </>
        )}
      </Show>
    </Page>
  );
}
