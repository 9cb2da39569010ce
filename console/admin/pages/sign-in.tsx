/**
 * Sign-in inside the console with svc's own endpoints and the cookie transport: passkey first,
 * then email and password with the MFA step (TOTP, email code, recovery code or a passkey).
 *
 * @module
 */
import { useEffect, useRef, useState } from "hono/jsx/dom";
import { api, ApiError } from "../api.ts";
import { getAssertion } from "../webauthn.ts";
import { ErrorNote, Field, FormError, Submit, useForm } from "../ui.tsx";

interface MfaStep {
  mfaToken: string;
  factors: string[];
}

const FACTOR_NAMES: Record<string, string> = {
  totp: "Authenticator app code",
  email_otp: "Code sent by email",
  recovery_code: "Recovery code",
};

/** The sign-in screen; `onSignedIn` runs once the session cookies are set. */
export function SignIn(props: { onSignedIn: () => void; notice?: string }) {
  const [mfa, setMfa] = useState<MfaStep | null>(null);
  const [passkeyError, setPasskeyError] = useState<unknown>(undefined);
  const [passkeyBusy, setPasskeyBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = "Sign in · svc admin";
    heading.current?.focus();
  }, [mfa === null]);

  const passwordForm = useForm(async (values) => {
    const body: Record<string, unknown> = { email: values.email, password: values.password };
    if (values.org) body.org = values.org;
    const answer = await api("POST", "/auth/login", body, { refresh: false });
    if (answer?.mfaRequired) setMfa({ mfaToken: answer.mfaToken, factors: answer.factors ?? [] });
    else props.onSignedIn();
  });

  const mfaForm = useForm(async (values) => {
    await api("POST", "/auth/mfa/verify", {
      mfaToken: mfa!.mfaToken,
      factor: values.factor,
      code: values.code,
    }, {
      refresh: false,
    });
    props.onSignedIn();
  });

  const passkey = async (mfaToken?: string) => {
    setPasskeyBusy(true);
    setPasskeyError(undefined);
    try {
      const start = await api("POST", "/auth/passkey/login/options", mfaToken ? { mfaToken } : {}, {
        refresh: false,
      });
      const response = await getAssertion(start.options);
      if (mfaToken) {
        await api("POST", "/auth/passkey/mfa/verify", { mfaToken, ceremonyId: start.ceremonyId, response }, {
          refresh: false,
        });
      } else {
        await api("POST", "/auth/passkey/login", { ceremonyId: start.ceremonyId, response }, {
          refresh: false,
        });
      }
      props.onSignedIn();
    } catch (error) {
      setPasskeyError(
        error instanceof ApiError || !(error instanceof Error)
          ? error
          : new Error(`The passkey sign-in did not complete: ${error.message}`),
      );
    } finally {
      setPasskeyBusy(false);
    }
  };

  if (mfa !== null) {
    const codeFactors = mfa.factors.filter((f) => f in FACTOR_NAMES);
    return (
      <main id="main" class="sign-in">
        <h1 tabIndex={-1} ref={heading}>Second step</h1>
        <p>Your account asks for a second factor.</p>
        {mfa.factors.includes("passkey")
          ? (
            <p>
              <button
                type="button"
                class="primary"
                disabled={passkeyBusy}
                onClick={() => passkey(mfa.mfaToken)}
              >
                Use a passkey
              </button>
            </p>
          )
          : null}
        {passkeyError !== undefined ? <ErrorNote error={passkeyError} /> : null}
        {codeFactors.length > 0
          ? (
            <form onSubmit={mfaForm.onSubmit} aria-label="Second factor code">
              <Field
                label="Factor"
                name="factor"
                options={codeFactors.map((f) => [f, FACTOR_NAMES[f]] as [string, string])}
                value={codeFactors[0]}
              />
              <Field
                label="Code"
                name="code"
                required
                autocomplete="one-time-code"
                inputmode="numeric"
                error={mfaForm.fields.code}
              />
              <FormError form={mfaForm} />
              <Submit form={mfaForm}>Verify</Submit>
            </form>
          )
          : null}
        <p>
          <button type="button" class="link" onClick={() => setMfa(null)}>Start again</button>
        </p>
      </main>
    );
  }

  return (
    <main id="main" class="sign-in">
      <h1 tabIndex={-1} ref={heading}>Sign in to svc admin</h1>
      {props.notice ? <p class="notice" role="status">{props.notice}</p> : null}
      <p>
        <button type="button" class="primary wide" disabled={passkeyBusy} onClick={() => passkey()}>
          {passkeyBusy ? "Waiting for your passkey…" : "Sign in with a passkey"}
        </button>
      </p>
      {passkeyError !== undefined ? <ErrorNote error={passkeyError} /> : null}
      <p class="or">or with your password</p>
      <form onSubmit={passwordForm.onSubmit} aria-label="Sign in with a password">
        <Field
          label="Email"
          name="email"
          type="email"
          required
          autocomplete="username"
          error={passwordForm.fields.email}
        />
        <Field
          label="Password"
          name="password"
          type="password"
          required
          autocomplete="current-password"
          error={passwordForm.fields.password}
        />
        <details>
          <summary>Organization administrators</summary>
          <Field
            label="Organization"
            name="org"
            hint="Its name, one of its verified email domains or its ID: sign in to your organization to manage it."
            error={passwordForm.fields.org}
          />
        </details>
        <FormError form={passwordForm} />
        <Submit form={passwordForm}>Sign in</Submit>
      </form>
    </main>
  );
}
