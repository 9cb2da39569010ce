/**
 * The first-run setup page (issue 27): the single-use link `svc start` prints opens
 * `#/setup?token=…`; the form creates the first administrator (`POST /setup/admin`, password per
 * the password policy) and signs in with that password. A passkey is added afterwards on
 * "My passkeys", with the ordinary enrollment.
 *
 * @module
 */
import { useEffect, useRef } from "hono/jsx/dom";
import { api, ApiError } from "../api.ts";
import { Field, FormError, Submit, useForm } from "../ui.tsx";

/** The setup page; `onSignedIn` runs once the new administrator's session cookies are set. */
export function Setup(props: { token: string; onSignedIn: () => void; onSignIn: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = "Create the first administrator · svc admin";
    heading.current?.focus();
  }, []);

  const form = useForm(async (values) => {
    if (values.password !== values.confirm) {
      throw new ApiError(400, "invalid_request", "The two passwords differ.", { field: "confirm" });
    }
    await api("POST", "/setup/admin", {
      token: props.token,
      email: values.email,
      password: values.password,
      ...(values.displayName ? { displayName: values.displayName } : {}),
    }, { refresh: false });
    const answer = await api("POST", "/auth/login", { email: values.email, password: values.password }, {
      refresh: false,
    });
    // The first sign-in may ask for a second step (a risk rule): the sign-in page takes it.
    if (answer?.mfaRequired) props.onSignIn();
    else props.onSignedIn();
  });

  const invalid = form.error instanceof ApiError &&
    (form.error.code === "setup_link_invalid" || form.error.code === "administrator_exists");

  return (
    <main id="main" class="sign-in">
      <h1 tabIndex={-1} ref={heading}>Create the first administrator</h1>
      <p>
        This svc has no administrator yet. The account you create here holds the <code>svc-admin</code>{" "}
        role: every permission of the console. The link works once.
      </p>
      <form onSubmit={form.onSubmit} aria-label="Create the first administrator">
        <Field
          label="Email"
          name="email"
          type="email"
          required
          autocomplete="username"
          error={form.fields.email}
        />
        <Field
          label="Name"
          name="displayName"
          autocomplete="name"
          value="Administrator"
          error={form.fields.displayName}
        />
        <Field
          label="Password"
          name="password"
          type="password"
          required
          autocomplete="new-password"
          hint="At least 8 characters."
          error={form.fields.password}
        />
        <Field
          label="Password again"
          name="confirm"
          type="password"
          required
          autocomplete="new-password"
          error={form.fields.confirm}
        />
        <FormError form={form} />
        <Submit form={form}>Create administrator and sign in</Submit>
      </form>
      {invalid
        ? (
          <p>
            <button type="button" class="link" onClick={props.onSignIn}>Go to sign-in</button>
          </p>
        )
        : null}
      <p class="muted">After signing in, add a passkey under “My passkeys”.</p>
    </main>
  );
}
