/**
 * Break-glass: status (drill, use, rotation), recording a drill, rotating the password.
 *
 * @module
 */
import { useState } from "hono/jsx/dom";
import { api } from "../api.ts";
import { useSession } from "../session.ts";
import {
  ConfirmButton,
  Field,
  FormError,
  Page,
  SecretOnce,
  Show,
  Submit,
  useForm,
  useLoad,
  When,
} from "../ui.tsx";

/** The break-glass page. */
export function BreakGlass() {
  const session = useSession();
  const loaded = useLoad(() => api("GET", "/svc-admin/break-glass/status"), "bg");
  const [drilled, setDrilled] = useState(false);
  const [rotated, setRotated] = useState<string | null>(null);
  const drill = useForm(async (values, el) => {
    await api("POST", "/svc-admin/break-glass/drill", { password: values.password });
    el.reset();
    setDrilled(true);
    loaded.reload();
  });
  return (
    <Page title="Break-glass">
      <Show loaded={loaded}>
        {(s) => (
          <section class="card" aria-labelledby="bgs-h">
            <h2 id="bgs-h">Status</h2>
            <dl class="facts">
              <dt>Account</dt>
              <dd>{s.account ? s.account.email : "none"}</dd>
              <dt>Last drill</dt>
              <dd>
                <When at={s.lastDrillAt} />
              </dd>
              <dt>Next drill due</dt>
              <dd>
                <When at={s.drillDueAt} /> {s.drillOverdue ? <strong class="bad">overdue</strong> : null}
              </dd>
              <dt>Last use</dt>
              <dd>
                <When at={s.lastUseAt} />
              </dd>
              <dt>Password rotated</dt>
              <dd>
                <When at={s.lastRotatedAt} />{" "}
                {s.rotationRequired ? <strong class="bad">rotation required</strong> : null}
              </dd>
            </dl>
          </section>
        )}
      </Show>
      {session.isGlobal("break-glass-manage")
        ? (
          <>
            <form onSubmit={drill.onSubmit} class="card" aria-labelledby="drill-h">
              <h2 id="drill-h">Record a drill</h2>
              <p>Checks the break-glass password without signing in.</p>
              <Field
                label="Break-glass password"
                name="password"
                type="password"
                required
                autocomplete="off"
                error={drill.fields.password}
              />
              <FormError form={drill} />
              {drilled ? <p role="status" class="ok">Drill recorded.</p> : null}
              <Submit form={drill}>Record drill</Submit>
            </form>
            <section class="card" aria-labelledby="rot-h">
              <h2 id="rot-h">Rotate the password</h2>
              <ConfirmButton
                label="Rotate password"
                title="Rotate the break-glass password?"
                message="The new password is shown once; break-glass sessions end."
                onConfirm={async () => {
                  const answer = await api("POST", "/svc-admin/break-glass/rotate", {});
                  setRotated(answer.password);
                  loaded.reload();
                }}
              />
              {rotated ? <SecretOnce label="New break-glass password" value={rotated} /> : null}
            </section>
          </>
        )
        : null}
    </Page>
  );
}
