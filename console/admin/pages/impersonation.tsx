/**
 * Impersonation: start one with its mandatory reason, the current and past ones, end one.
 *
 * @module
 */
import { useState } from "hono/jsx/dom";
import { api, query } from "../api.ts";
import { href } from "../router.ts";
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
import { Picker, resolvePick } from "../picker.tsx";

/** The impersonation page. */
export function Impersonation() {
  const session = useSession();
  const [filter, setFilter] = useState({ state: "current", offset: 0 });
  const loaded = useLoad(
    () =>
      api(
        "GET",
        `/svc-admin/impersonation${query({ state: filter.state, offset: filter.offset, limit: 20 })}`,
      ),
    JSON.stringify(filter),
  );
  const [started, setStarted] = useState<any>(null);
  const form = useForm(async (values, el) => {
    const body: Record<string, unknown> = {
      targetUserId: await resolvePick("User", values.user, "user"),
      reason: values.reason,
    };
    if (values.minutes) body.durationSeconds = Number(values.minutes) * 60;
    setStarted(await api("POST", "/svc-admin/impersonation", body));
    el.reset();
    loaded.reload();
  });
  return (
    <Page title="Impersonation">
      {session.canAny("impersonate")
        ? (
          <form onSubmit={form.onSubmit} class="card" aria-labelledby="imp-start-h">
            <h2 id="imp-start-h">Start an impersonation</h2>
            <Picker
              kind="User"
              label="User (email or name)"
              name="user"
              required
              error={form.fields.user ?? form.fields.targetUserId}
            />
            <Field
              label="Reason"
              name="reason"
              required
              hint="Recorded in the audit chain."
              error={form.fields.reason}
            />
            <Field
              label="Duration (minutes, optional)"
              name="minutes"
              type="number"
              error={form.fields.durationSeconds}
            />
            <FormError form={form} />
            <Submit form={form}>Start</Submit>
          </form>
        )
        : null}
      {started
        ? started.accessToken
          ? <SecretOnce label="Access token of the impersonation (act claim)" value={started.accessToken} />
          : (
            <p role="status">
              Waiting for the user's consent (until {new Date(started.consentExpiresAt).toLocaleString()}).
            </p>
          )
        : null}
      <div class="toolbar">
        <Field
          label="Show"
          name="state"
          value={filter.state}
          options={[["current", "Current"], ["past", "Past"], ["all", "All"]]}
          onInput={(state) => setFilter({ state, offset: 0 })}
        />
      </div>
      <Show loaded={loaded}>
        {(list) => (
          <PagedTable
            list={list}
            empty="No impersonation."
            onPage={(offset) => setFilter({ ...filter, offset })}
            columns={["Target", "Actor", "Reason", "Status", "Ends", ""]}
            row={(i: any) => (
              <>
                <td>
                  <a href={href(`/users/${i.targetId}`)}>
                    <code>{i.targetId.slice(0, 8)}</code>
                  </a>
                </td>
                <td>
                  <code>{i.actorId.slice(0, 8)}</code>
                </td>
                <td>{i.reason}</td>
                <td>{i.status}</td>
                <td>
                  <When at={i.endedAt ?? i.expiresAt} />
                </td>
                <td>
                  {i.current
                    ? (
                      <ConfirmButton
                        label="End"
                        title="End this impersonation?"
                        message="Its tokens stop at once."
                        onConfirm={async () => {
                          await api("POST", `/svc-admin/impersonation/${i.id}/end`, {});
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
    </Page>
  );
}
