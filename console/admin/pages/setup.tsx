/**
 * The first-run setup page (issue 27): the single-use link `svc start` prints opens
 * `#/setup?token=…`; the form creates the first administrator (`POST /setup/admin`, password per
 * the password policy) and signs in with that password. The page after it (`SetupDone`, at
 * `#/setup` once signed in) offers a passkey right away with the enrollment of "My passkeys".
 *
 * @module
 */
import { useEffect, useRef, useState } from "hono/jsx/dom";
import { api, ApiError } from "../api.ts";
import { href } from "../router.ts";
import { ErrorNote, Field, FormError, Page, Submit, useForm } from "../ui.tsx";
import { addPasskey } from "./account.tsx";

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
      <p class="muted">Once signed in, you can add a passkey and sign in with it next time.</p>
    </main>
  );
}

/**
 * The page right after setup: the administrator is signed in with the new password; "Add a
 * passkey now" runs the ordinary passkey enrollment (as "My passkeys" does).
 */
export function SetupDone() {
  const [name, setName] = useState("");
  const [error, setError] = useState<unknown>(undefined);
  const [state, setState] = useState<"idle" | "busy" | "done">("idle");
  const add = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setState("busy");
    try {
      await addPasskey(name);
      setState("done");
    } catch (err) {
      setError(err);
      setState("idle");
    }
  };
  return (
    <Page title="Setup is done">
      <p>
        You are signed in as the first administrator. A passkey lets you sign in next time without the
        password, and it cannot be phished.
      </p>
      {state === "done"
        ? (
          <p role="status" class="ok">
            Passkey added. It is listed under <a href={href("/account")}>My passkeys</a>.
          </p>
        )
        : (
          <form onSubmit={add} class="card" aria-labelledby="setup-passkey-h">
            <h2 id="setup-passkey-h">Add a passkey</h2>
            <Field label="Name (optional)" name="name" onInput={setName} hint="For example: laptop." />
            {error !== undefined ? <ErrorNote error={error} /> : null}
            <button type="submit" class="primary" disabled={state === "busy"}>Add a passkey now</button>
          </form>
        )}
      <p>
        <a href={href("/")}>
          {state === "done" ? "Go to the overview" : "Skip for now and go to the overview"}
        </a>
      </p>
    </Page>
  );
}
