/**
 * The hosted account pages (issue 14): sign-in (password, then the second factor), the landing
 * pages of mailed links (reset password, verify email, accept invitation, approve an
 * impersonation consent), forgot password, and the self-service account (profile, sessions with
 * remote logout, TOTP enrollment with a QR code, recovery codes shown once). Every call goes to
 * svc's JSON API with the cookie session (`api.ts`); texts come from the catalogue (`i18n.ts`).
 *
 * @module
 */
import { render, useEffect, useRef, useState } from "hono/jsx/dom";
import qrcode from "qrcode-generator";
import { api, type ApiAnswer, errorCode } from "./api.ts";
import { type CaptchaDemand, captchaDemand, renderCaptcha } from "./captcha.ts";
import { Field } from "./field.tsx";
import { type MessageKey, pickLanguage, retryWhen, translator } from "./i18n.ts";
import { describeEvent, describeUserAgent, line, timeAgo } from "./describe.ts";
import {
  conditionalMediationAvailable,
  createCredential,
  getAssertion,
  passkeysAvailable,
} from "./passkey.ts";
import { allowedReturnTo } from "./return-to.ts";
import { OrganizationSignIn } from "./organization-sign-in.tsx";

const lang = pickLanguage(navigator.languages?.length ? navigator.languages : [navigator.language]);
const t = translator(lang);

/** The message of a 429 `login_blocked`: with the wait when the answer tells it. */
function blocked(answer: ApiAnswer): string {
  const seconds = answer.body?.error?.details?.retryAfterSeconds;
  return typeof seconds === "number" && seconds > 0
    ? t("signIn.blockedFor", { when: retryWhen(lang, seconds) })
    : t("signIn.blocked");
}
document.documentElement.lang = lang;

/** The app's base URL (`<base href>`: path base + mount + "/"). */
const BASE = new URL(document.baseURI);

/** The settings `GET /auth/hosted-settings` gives. */
interface HostedSettings {
  productName: string;
  color: string;
  logoUrl: string | null;
  returnToOrigins: string[];
  /** The realm the pages address (`?realm=`), null for the default one. */
  realm: string | null;
  selfSignUp: boolean;
}

let settings: HostedSettings = {
  productName: "svc",
  color: "#1f5fbf",
  logoUrl: null,
  returnToOrigins: [location.origin],
  realm: null,
  selfSignUp: false,
};

/**
 * The realm the pages address, or "" for the default: the page's `?realm=` (carried from page to
 * page), else a signed-in user's own realm.
 */
let REALM = new URLSearchParams(location.search).get("realm") ?? "";

/** `{ realm }` for request bodies when the pages address a realm other than the default. */
const realmBody = (): { realm?: string } => (REALM ? { realm: REALM } : {});

/** `?realm=…` for query strings, or "". */
const realmQuery = (): string => (REALM ? `?realm=${encodeURIComponent(REALM)}` : "");

/** A page of the app with the realm carried along. */
const href = (page: string, params: Record<string, string> = {}): string => {
  const search = new URLSearchParams(Object.entries({ realm: REALM, ...params }).filter(([, v]) => v !== ""));
  return search.size ? `${page}?${search}` : page;
};

/** The page name: the first path segment under the mount ("" for the mount itself). */
function pageName(): string {
  const rest = location.pathname.startsWith(BASE.pathname)
    ? location.pathname.slice(BASE.pathname.length)
    : "";
  return rest.split("/")[0] ?? "";
}

function query(name: string): string {
  return new URLSearchParams(location.search).get(name) ?? "";
}

/** Goes to another page of the app (a full navigation: each page loads fresh). */
function go(page: string, params: Record<string, string> = {}): void {
  const url = new URL(page, BASE);
  for (const [k, v] of Object.entries({ realm: REALM, ...params })) if (v) url.searchParams.set(k, v);
  location.assign(url.href);
}

function Shell(props: { title: MessageKey; children: any; signedIn?: boolean }) {
  useEffect(() => {
    document.title = `${t(props.title)} · ${settings.productName}`;
  }, []);
  return (
    <div class="shell">
      <header class="brand">
        {settings.logoUrl
          ? <img src={settings.logoUrl} alt={settings.productName} class="logo" />
          : <span class="product">{settings.productName}</span>}
        {props.signedIn ? <SignOutButton /> : null}
      </header>
      <main>
        <h1>{t(props.title)}</h1>
        {props.children}
      </main>
    </div>
  );
}

function Alert(props: { kind: "error" | "ok"; text: string }) {
  return props.text
    ? <p class={`alert ${props.kind}`} role={props.kind === "error" ? "alert" : "status"}>{props.text}</p>
    : null;
}

/** The CAPTCHA widget the abuse gate demanded: rendered once into its box; its token goes to `onToken`. */
function Captcha(props: { demand: CaptchaDemand; onToken: (token: string) => void }) {
  const box = useRef<HTMLDivElement | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    if (box.current) renderCaptcha(props.demand, box.current, props.onToken).catch(() => setFailed(true));
  }, [props.demand.provider, props.demand.siteKey]);
  return (
    <div class="captcha">
      <p id="captcha-intro">{t(failed ? "captcha.failed" : "captcha.intro")}</p>
      <div id="captcha" ref={box} aria-describedby="captcha-intro" />
    </div>
  );
}

function strength(password: string): MessageKey {
  if (password.length < 8) return "strength.tooShort";
  let classes = 0;
  for (const re of [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/]) if (re.test(password)) classes++;
  const score = password.length + classes * 3;
  return score >= 22 ? "strength.strong" : score >= 15 ? "strength.fair" : "strength.weak";
}

function NewPasswordFields(props: { onChange: (password: string, confirm: string) => void }) {
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const level = strength(password);
  return (
    <>
      <Field
        id="new-password"
        label={t("common.newPassword")}
        type="password"
        autocomplete="new-password"
        required
        minLength={8}
        describedBy="strength"
        value={password}
        onValue={(value) => {
          setPassword(value);
          props.onChange(value, confirm);
        }}
      />
      <p id="strength" class="hint" aria-live="polite">
        {password === ""
          ? t("strength.tooShort")
          : level === "strength.tooShort"
          ? t(level)
          : t("strength.label", { level: t(level) })}
      </p>
      <Field
        id="confirm-password"
        label={t("common.confirmPassword")}
        type="password"
        autocomplete="new-password"
        required
        value={confirm}
        onValue={(value) => {
          setConfirm(value);
          props.onChange(password, value);
        }}
      />
    </>
  );
}

// ---- sign-in ----

function SignIn() {
  // `login_hint`: the OIDC provider passes the relying party's hint on.
  const [email, setEmail] = useState(query("email") || query("login_hint"));
  const [password, setPassword] = useState("");
  const [mfa, setMfa] = useState<{ token: string; factors: string[] } | null>(null);
  const [factor, setFactor] = useState("totp");
  const [code, setCode] = useState("");
  const [error, setError] = useState("");
  const [notice, setNotice] = useState("");
  const [busy, setBusy] = useState(false);
  const [captcha, setCaptcha] = useState<CaptchaDemand | null>(null);
  const [captchaToken, setCaptchaToken] = useState("");
  const returnTo = query("returnTo");
  const target = allowedReturnTo(returnTo, settings.returnToOrigins, location.origin);

  const finish = () => {
    if (returnTo && target === null) {
      go("", { notice: "return-refused" });
      return;
    }
    if (target) location.assign(target);
    else go("");
  };

  // Passkey autofill (conditional mediation): the email field offers the passkeys of this site;
  // picking one signs in. Aborted before any other ceremony or the password step (one at a time).
  const autofill = useRef<AbortController | null>(null);
  const stopAutofill = () => {
    autofill.current?.abort();
    autofill.current = null;
  };
  useEffect(() => {
    const abort = new AbortController();
    autofill.current = abort;
    (async () => {
      if (!await conditionalMediationAvailable() || abort.signal.aborted) return;
      const started = await api("GET", `/auth/passkey/login/options${realmQuery()}`);
      if (started.status !== 200 || abort.signal.aborted) return;
      let response: unknown;
      try {
        response = await getAssertion(started.body.options, {
          mediation: "conditional",
          signal: abort.signal,
        });
      } catch {
        return; // aborted, or the person dismissed it: the other ways stay open
      }
      const answer = await api("POST", "/auth/passkey/login", {
        ceremonyId: started.body.ceremonyId,
        response,
      });
      if (answer.status === 200) finish();
      else setError(t("passkey.failed"));
    })();
    return () => abort.abort();
  }, []);

  const submitPassword = async (e: Event) => {
    e.preventDefault();
    stopAutofill();
    setBusy(true);
    setError("");
    const answer = await api("POST", "/auth/login", {
      email,
      password,
      ...realmBody(),
      ...(captchaToken ? { captchaToken } : {}),
    });
    setBusy(false);
    setCaptchaToken("");
    if (answer.status === 200 && answer.body?.mfaRequired) {
      const factors: string[] = answer.body.factors ?? ["totp"];
      setMfa({ token: answer.body.mfaToken, factors });
      setFactor(factors[0] ?? "totp");
      return;
    }
    if (answer.status === 200) return finish();
    const code = errorCode(answer);
    const demand = code === "captcha_required" ? captchaDemand(answer.body?.error?.details) : null;
    if (demand) setCaptcha(demand);
    setError(
      answer.status === 429
        ? blocked(answer)
        : code === "captcha_required"
        ? t(demand ? "captcha.solve" : "signIn.captcha")
        : code === "invalid_credentials"
        ? t("signIn.invalid")
        : t("common.error"),
    );
  };

  const passkeySignIn = async () => {
    stopAutofill();
    setError("");
    try {
      const started = await api("GET", `/auth/passkey/login/options${realmQuery()}`);
      if (started.status !== 200) {
        return setError(started.status === 429 ? blocked(started) : t("passkey.failed"));
      }
      const response = await getAssertion(started.body.options);
      const answer = await api("POST", "/auth/passkey/login", {
        ceremonyId: started.body.ceremonyId,
        response,
      });
      if (answer.status === 200) return finish();
      setError(t("passkey.failed"));
    } catch {
      setError(t("passkey.failed"));
    }
  };

  const passkeySecondFactor = async () => {
    if (!mfa) return;
    setError("");
    try {
      const started = await api("POST", "/auth/passkey/login/options", { mfaToken: mfa.token });
      if (started.status !== 200) return setError(t("passkey.failed"));
      const response = await getAssertion(started.body.options);
      const answer = await api("POST", "/auth/passkey/mfa/verify", {
        mfaToken: mfa.token,
        ceremonyId: started.body.ceremonyId,
        response,
      });
      if (answer.status === 200) return finish();
      setError(t("passkey.failed"));
    } catch {
      setError(t("passkey.failed"));
    }
  };

  const submitCode = async (e: Event) => {
    e.preventDefault();
    if (!mfa) return;
    setBusy(true);
    setError("");
    const answer = await api("POST", "/auth/mfa/verify", { mfaToken: mfa.token, factor, code: code.trim() });
    setBusy(false);
    if (answer.status === 200) return finish();
    const c = errorCode(answer);
    if (c === "invalid_token") {
      setMfa(null);
      setError(t("mfa.expired"));
    } else setError(c === "invalid_mfa_code" ? t("mfa.invalid") : t("common.error"));
  };

  if (mfa) {
    return (
      <Shell title="mfa.title">
        <Alert kind="error" text={error} />
        <Alert kind="ok" text={notice} />
        <form onSubmit={submitCode}>
          <fieldset>
            <legend>{t("mfa.factor")}</legend>
            {mfa.factors.filter((f) => f === "totp" || f === "email_otp" || f === "recovery_code").map((
              f,
            ) => (
              <label class="choice" key={f}>
                <input
                  type="radio"
                  name="factor"
                  value={f}
                  checked={factor === f}
                  onChange={() => setFactor(f)}
                />
                {t(`mfa.${f}` as MessageKey)}
              </label>
            ))}
          </fieldset>
          <Field
            id="code"
            label={t("mfa.code")}
            autocomplete="one-time-code"
            inputMode={factor === "recovery_code" ? "text" : "numeric"}
            required
            value={code}
            onValue={setCode}
          />
          <button type="submit" disabled={busy}>{busy ? t("common.working") : t("mfa.submit")}</button>
        </form>
        {mfa.factors.includes("passkey") && passkeysAvailable()
          ? <button type="button" class="secondary" onClick={passkeySecondFactor}>{t("passkey.mfa")}</button>
          : null}
        {factor === "email_otp"
          ? (
            <button
              type="button"
              class="link"
              onClick={async () => {
                // A new password step sends a new code to the mailbox.
                const answer = await api("POST", "/auth/login", { email, password, ...realmBody() });
                if (answer.status === 200 && answer.body?.mfaRequired) {
                  setMfa({ token: answer.body.mfaToken, factors: answer.body.factors ?? mfa.factors });
                  setNotice(t("mfa.sent"));
                }
              }}
            >
              {t("mfa.resend")}
            </button>
          )
          : null}
      </Shell>
    );
  }

  return (
    <Shell title="signIn.title">
      <Alert kind="error" text={error} />
      <form onSubmit={submitPassword}>
        <Field
          id="email"
          label={t("common.email")}
          type="email"
          autocomplete="username webauthn"
          required
          value={email}
          onValue={setEmail}
        />
        <Field
          id="password"
          label={t("common.password")}
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onValue={setPassword}
        />
        {captcha ? <Captcha demand={captcha} onToken={setCaptchaToken} /> : null}
        <button type="submit" disabled={busy}>{busy ? t("common.working") : t("signIn.submit")}</button>
      </form>
      <OrganizationSignIn email={email} returnTo={target ?? ""} lang={lang} />
      {passkeysAvailable()
        ? (
          <button type="button" class="secondary" id="passkey-sign-in" onClick={passkeySignIn}>
            {t("signIn.passkey")}
          </button>
        )
        : null}
      <p>
        <a href={href("forgot-password", { email })}>{t("signIn.forgot")}</a>
      </p>
      {settings.selfSignUp
        ? (
          <p>
            <a href={href("sign-up", { email })}>{t("signIn.signUp")}</a>
          </p>
        )
        : null}
    </Shell>
  );
}

// ---- mailed links ----

function Forgot() {
  const [email, setEmail] = useState(query("email"));
  const [done, setDone] = useState(false);
  const [error, setError] = useState("");
  return (
    <Shell title="forgot.title">
      {done ? <Alert kind="ok" text={t("forgot.sent")} /> : (
        <form
          onSubmit={async (e: Event) => {
            e.preventDefault();
            const answer = await api("POST", "/auth/password/forgot", { email, ...realmBody() });
            if (answer.status === 202 || answer.status === 200) setDone(true);
            else setError(answer.status === 429 ? blocked(answer) : t("common.error"));
          }}
        >
          <Alert kind="error" text={error} />
          <p>{t("forgot.intro")}</p>
          <Field
            id="email"
            label={t("common.email")}
            type="email"
            autocomplete="username"
            required
            value={email}
            onValue={setEmail}
          />
          <button type="submit">{t("forgot.submit")}</button>
        </form>
      )}
      <p>
        <a href={href("sign-in")}>{t("nav.signIn")}</a>
      </p>
    </Shell>
  );
}

/** Self sign-up: an email address, then a mailed link (the same answer whether or not it has an account). */
function SignUp() {
  const [email, setEmail] = useState(query("email"));
  const [state, setState] = useState<"form" | "sent" | "closed">(settings.selfSignUp ? "form" : "closed");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const [captcha, setCaptcha] = useState<CaptchaDemand | null>(null);
  const [captchaToken, setCaptchaToken] = useState("");
  return (
    <Shell title="signUp.title">
      {state === "sent"
        ? <Alert kind="ok" text={t("signUp.sent")} />
        : state === "closed"
        ? <Alert kind="error" text={t("signUp.closed")} />
        : (
          <form
            onSubmit={async (e: Event) => {
              e.preventDefault();
              setBusy(true);
              setError("");
              const answer = await api("POST", "/auth/sign-up", {
                email,
                ...realmBody(),
                ...(captchaToken ? { captchaToken } : {}),
              });
              setBusy(false);
              setCaptchaToken("");
              if (answer.status === 202) return setState("sent");
              const code = errorCode(answer);
              if (code === "sign_up_closed") return setState("closed");
              const demand = code === "captcha_required" ? captchaDemand(answer.body?.error?.details) : null;
              if (demand) setCaptcha(demand);
              setError(
                answer.status === 429
                  ? blocked(answer)
                  : code === "captcha_required"
                  ? t(demand ? "captcha.solve" : "signIn.captcha")
                  : t("common.error"),
              );
            }}
          >
            <Alert kind="error" text={error} />
            <p>{t("signUp.intro")}</p>
            <Field
              id="email"
              label={t("common.email")}
              type="email"
              autocomplete="email"
              required
              value={email}
              onValue={setEmail}
            />
            {captcha ? <Captcha demand={captcha} onToken={setCaptchaToken} /> : null}
            <button type="submit" disabled={busy}>{busy ? t("common.working") : t("signUp.submit")}</button>
          </form>
        )}
      <p>
        <a href={href("sign-in")}>{t("nav.signIn")}</a>
      </p>
    </Shell>
  );
}

/** A page that sets a password with a mailed token (reset, invitation, sign-up). */
function PasswordWithToken(props: {
  title: MessageKey;
  intro?: MessageKey;
  submit: MessageKey;
  done: MessageKey;
  invalid: MessageKey;
  path: string;
  withName?: boolean;
  /** Offer accepting with a passkey instead of a password (invitations). */
  withPasskey?: boolean;
  /** Name the invited address and organization (`POST /auth/invitation/describe`). */
  describeInvitation?: boolean;
}) {
  const token = query("token");
  const [pair, setPair] = useState<[string, string]>(["", ""]);
  const [about, setAbout] = useState<{ email: string; organization: { displayName: string } | null } | null>(
    null,
  );
  useEffect(() => {
    if (!props.describeInvitation || !token) return;
    api("POST", "/auth/invitation/describe", { token }).then((answer) => {
      if (answer.status === 200) setAbout(answer.body);
      else setError(t(props.invalid));
    });
  }, []);
  const [name, setName] = useState("");
  const [error, setError] = useState(token ? "" : t("common.noToken"));
  const [doneEmail, setDoneEmail] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (doneEmail !== null) {
    return (
      <Shell title={props.title}>
        <Alert kind="ok" text={t(props.done)} />
        <p>
          <a href={href("sign-in", { email: doneEmail })}>
            {t("nav.signIn")}
          </a>
        </p>
      </Shell>
    );
  }
  return (
    <Shell title={props.title}>
      <Alert kind="error" text={error} />
      {about
        ? (
          <p id="invitation-about">
            {about.organization
              ? t("invite.forOrg", { email: about.email, org: about.organization.displayName })
              : t("invite.forRealm", { email: about.email })}
          </p>
        )
        : null}
      {props.intro ? <p>{t(props.intro)}</p> : null}
      <form
        onSubmit={async (e: Event) => {
          e.preventDefault();
          if (pair[0] !== pair[1]) return setError(t("common.mismatch"));
          if (pair[0].length < 8) return setError(t("strength.tooShort"));
          setBusy(true);
          const body: Record<string, string> = { token, password: pair[0] };
          if (props.withName && name.trim()) body.displayName = name.trim();
          const answer = await api("POST", props.path, body);
          setBusy(false);
          if (answer.status >= 200 && answer.status < 300) setDoneEmail(answer.body?.email ?? "");
          else {
            setError(
              errorCode(answer) === "validation_failed" && answer.body?.error?.message
                ? answer.body.error.message
                : t(props.invalid),
            );
          }
        }}
      >
        {props.withName
          ? (
            <>
              <Field
                id="display-name"
                label={t("common.displayName")}
                autocomplete="name"
                value={name}
                onValue={setName}
              />
            </>
          )
          : null}
        <NewPasswordFields onChange={(p, c) => setPair([p, c])} />
        <button type="submit" disabled={busy || !token}>
          {busy ? t("common.working") : t(props.submit)}
        </button>
      </form>
      {props.withPasskey && passkeysAvailable() && token
        ? (
          <section aria-labelledby="passkey-accept-h">
            <h2 id="passkey-accept-h">{t("account.passkeys")}</h2>
            <p>{t("invite.passkeyIntro")}</p>
            <button
              type="button"
              class="secondary"
              id="accept-passkey"
              disabled={busy}
              onClick={async () => {
                setError("");
                setBusy(true);
                try {
                  const started = await api("POST", "/auth/invitation/passkey/options", { token });
                  if (started.status !== 200) return setError(t(props.invalid));
                  const response = await createCredential(started.body.options);
                  const body: Record<string, unknown> = {
                    token,
                    ceremonyId: started.body.ceremonyId,
                    response,
                  };
                  if (name.trim()) body.displayName = name.trim();
                  const answer = await api("POST", "/auth/invitation/passkey", body);
                  if (answer.status === 200) setDoneEmail(answer.body?.email ?? "");
                  else setError(t(props.invalid));
                } catch {
                  setError(t("passkey.failed"));
                } finally {
                  setBusy(false);
                }
              }}
            >
              {t("invite.passkey")}
            </button>
          </section>
        )
        : null}
    </Shell>
  );
}

function VerifyEmail() {
  const token = query("token");
  const [state, setState] = useState<"idle" | "done" | "invalid">("idle");
  return (
    <Shell title="verify.title">
      {state === "done"
        ? <Alert kind="ok" text={t("verify.done")} />
        : state === "invalid"
        ? <Alert kind="error" text={t("verify.invalid")} />
        : (
          <>
            {token ? <p>{t("verify.intro")}</p> : <Alert kind="error" text={t("common.noToken")} />}
            <button
              type="button"
              disabled={!token}
              onClick={async () => {
                const answer = await api("POST", "/auth/email/verify", { token });
                setState(answer.status === 200 ? "done" : "invalid");
              }}
            >
              {t("verify.submit")}
            </button>
          </>
        )}
      <p>
        <a href="./">{t("nav.account")}</a>
      </p>
    </Shell>
  );
}

function ImpersonationConsent(props: { signedIn: boolean }) {
  const token = query("token");
  const [state, setState] = useState<"idle" | "done" | "invalid">("idle");
  if (!props.signedIn) {
    const back = `${location.pathname}${location.search}`;
    return (
      <Shell title="consent.title">
        <p>{t("consent.signIn")}</p>
        <p>
          <a href={href("sign-in", { returnTo: back })}>{t("nav.signIn")}</a>
        </p>
      </Shell>
    );
  }
  return (
    <Shell title="consent.title" signedIn>
      {state === "done"
        ? <Alert kind="ok" text={t("consent.done")} />
        : state === "invalid"
        ? <Alert kind="error" text={t("consent.invalid")} />
        : (
          <>
            <p>{t("consent.intro")}</p>
            <button
              type="button"
              disabled={!token}
              onClick={async () => {
                const answer = await api("POST", "/svc-admin/impersonation/consent/approve", { token });
                setState(answer.status === 200 ? "done" : "invalid");
              }}
            >
              {t("consent.submit")}
            </button>
          </>
        )}
    </Shell>
  );
}

// ---- self-service ----

function SignOutButton() {
  return (
    <button
      type="button"
      class="secondary"
      onClick={async () => {
        await api("POST", "/auth/logout", {});
        go("sign-in", { notice: "signed-out" });
      }}
    >
      {t("nav.signOut")}
    </button>
  );
}

interface Profile {
  realmId?: string;
  email: string;
  emailVerified: boolean;
  displayName: string | null;
}

interface SessionRow {
  id: string;
  current: boolean;
  lastSeenAt: string;
  deviceDescription: string | null;
  ipAddress: string | null;
}

/** A client with access to the account (`GET /profile/apps`). */
interface AppRow {
  readonly clientId: string;
  readonly clientName: string;
  readonly scopes: readonly string[];
  readonly grantedAt: string;
  readonly lastUsedAt: string | null;
}

function Account(props: { profile: Profile }) {
  const [sessions, setSessions] = useState<SessionRow[]>([]);
  const [apps, setApps] = useState<AppRow[] | null>(null);
  const [factors, setFactors] = useState<
    { totp: string; recoveryCodesRemaining: number; emailOtpEnrolled?: boolean } | null
  >(null);
  const [events, setEvents] = useState<
    { id: string; kind: string; occurredAt: string; ipAddress: string | null }[]
  >(
    [],
  );
  const [emailOtpPending, setEmailOtpPending] = useState(false);
  const [emailCode, setEmailCode] = useState("");
  const [enrollment, setEnrollment] = useState<{ secret: string; uri: string; qr: string } | null>(null);
  const [code, setCode] = useState("");
  const [codes, setCodes] = useState<string[] | null>(null);
  const [proofNeeded, setProofNeeded] = useState(false);
  const [proofCode, setProofCode] = useState("");
  const [passkeys, setPasskeys] = useState<{ id: string; name: string | null; createdAt?: string }[]>([]);
  const [passkeyName, setPasskeyName] = useState("");
  const [renaming, setRenaming] = useState<{ id: string; old: string; name: string } | null>(null);
  const [message, setMessage] = useState("");
  const [error, setError] = useState("");
  const notice = query("notice");

  const load = async () => {
    const [s, f, p, ev] = await Promise.all([
      api("GET", "/profile/sessions"),
      api("GET", "/profile/factors"),
      api("GET", "/auth/passkey"),
      api("GET", "/profile/security-events?limit=10"),
    ]);
    // Served by the OIDC provider plugin: without it (404) the section is not shown.
    const a = await api("GET", "/profile/apps");
    setApps(a.status === 200 ? a.body.apps : null);
    if (ev.status === 200) setEvents(ev.body.events);
    if (s.status === 200) setSessions(s.body.sessions);
    if (f.status === 200) setFactors(f.body);
    if (p.status === 200) setPasskeys(p.body.passkeys);
  };
  useEffect(() => {
    load();
  }, []);

  const startTotp = async () => {
    setError("");
    const answer = await api("POST", "/profile/factors/totp", {});
    if (answer.status !== 200) return setError(t("common.error"));
    const qr = qrcode(0, "M");
    qr.addData(answer.body.uri);
    qr.make();
    setEnrollment({ secret: answer.body.secret, uri: answer.body.uri, qr: qr.createDataURL(4, 4) });
  };

  const confirmTotp = async (e: Event) => {
    e.preventDefault();
    const answer = await api("POST", "/profile/factors/totp/confirm", { code: code.trim() });
    if (answer.status !== 200) return setError(t("mfa.invalid"));
    setEnrollment(null);
    setCode("");
    setError("");
    setMessage(t("account.totpDone"));
    await load();
  };

  // Once TOTP is on, new recovery codes need a proof (a multi-factor session or a current code):
  // a 403 second_factor_required asks for a code, and every other refusal gets its own message.
  const newCodes = async (e?: Event) => {
    e?.preventDefault();
    setError("");
    setMessage("");
    const proof = proofNeeded ? { code: proofCode.trim() } : {};
    const answer = await api("POST", "/profile/factors/recovery-codes", proof);
    if (answer.status === 200) {
      setProofNeeded(false);
      setProofCode("");
      setCodes(answer.body.codes);
      return await load();
    }
    const code = errorCode(answer);
    if (code === "second_factor_required") {
      // With a code sent, the refusal means that code was not right.
      if (proofNeeded) setError(proofCode.trim() ? t("mfa.invalid") : t("recovery.proofNeeded"));
      setProofNeeded(true);
      return;
    }
    setError(
      code === "invalid_mfa_code"
        ? t("mfa.invalid")
        : code === "totp_code_replayed"
        ? t("mfa.replayed")
        : answer.status === 429
        ? blocked(answer)
        : answer.status === 401
        ? t("recovery.signInAgain")
        : t("common.error"),
    );
  };

  const addPasskey = async () => {
    setError("");
    try {
      const body = passkeyName.trim() ? { name: passkeyName.trim() } : {};
      const started = await api("POST", "/auth/passkey/register/options", body);
      if (started.status !== 200) return setError(t("passkey.failed"));
      const response = await createCredential(started.body.options);
      const answer = await api("POST", "/auth/passkey/register", {
        ceremonyId: started.body.ceremonyId,
        response,
        ...body,
      });
      if (answer.status !== 201) return setError(t("passkey.failed"));
      setPasskeyName("");
      setMessage(t("account.passkeyAdded"));
      await load();
    } catch {
      setError(t("passkey.failed"));
    }
  };

  const download = () => {
    const blob = new Blob([`${settings.productName}\n${(codes ?? []).join("\n")}\n`], { type: "text/plain" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = "recovery-codes.txt";
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  };

  return (
    <Shell title="account.title" signedIn>
      {notice === "return-refused" ? <Alert kind="error" text={t("signIn.returnRefused")} /> : null}
      <Alert kind="ok" text={message} />
      <Alert kind="error" text={error} />
      <section aria-labelledby="profile-h">
        <h2 id="profile-h">{t("account.profile")}</h2>
        <p>
          {props.profile.displayName ? <strong>{props.profile.displayName}</strong> : null}{" "}
          <span id="profile-email">{props.profile.email}</span>{" "}
          ({props.profile.emailVerified ? t("account.verified") : t("account.unverified")})
        </p>
        {props.profile.emailVerified ? null : (
          <button
            type="button"
            class="secondary"
            onClick={async () => {
              const answer = await api("POST", "/auth/email/verify/request", { email: props.profile.email });
              setMessage(answer.status < 300 ? t("account.verificationSent") : t("common.error"));
            }}
          >
            {t("account.sendVerification")}
          </button>
        )}
      </section>
      <section aria-labelledby="factors-h">
        <h2 id="factors-h">{t("account.factors")}</h2>
        <h3>{t("account.totp")}</h3>
        <p id="totp-state">{factors?.totp === "confirmed" ? t("account.totpOn") : t("account.totpOff")}</p>
        {factors && factors.totp !== "confirmed" && enrollment === null
          ? <button type="button" onClick={startTotp}>{t("account.totpEnroll")}</button>
          : null}
        {enrollment
          ? (
            <form onSubmit={confirmTotp}>
              <p>{t("account.totpScan")}</p>
              <img id="totp-qr" src={enrollment.qr} alt={t("account.qrAlt")} width={180} height={180} />
              <p>
                {t("account.totpManual")} <code id="totp-secret">{enrollment.secret}</code>
              </p>
              <details>
                <summary>{t("account.totpUri")}</summary>
                <code id="totp-uri" class="wrap">{enrollment.uri}</code>
              </details>
              <Field
                id="totp-code"
                label={t("mfa.code")}
                autocomplete="one-time-code"
                inputMode="numeric"
                required
                value={code}
                onValue={setCode}
              />
              <button type="submit">{t("account.totpConfirm")}</button>
            </form>
          )
          : null}
        <h3>{t("account.emailOtp")}</h3>
        {factors?.emailOtpEnrolled ? <p>{t("account.emailOtpOn")}</p> : emailOtpPending
          ? (
            <form
              onSubmit={async (e: Event) => {
                e.preventDefault();
                const answer = await api("POST", "/profile/factors/email-otp/confirm", {
                  code: emailCode.trim(),
                });
                if (answer.status !== 200) return setError(t("mfa.invalid"));
                setEmailOtpPending(false);
                setEmailCode("");
                setError("");
                setMessage(t("account.emailOtpDone"));
                await load();
              }}
            >
              <p>{t("account.emailOtpSent")}</p>
              <Field
                id="email-otp-code"
                label={t("mfa.code")}
                autocomplete="one-time-code"
                inputMode="numeric"
                required
                value={emailCode}
                onValue={setEmailCode}
              />
              <button type="submit">{t("account.totpConfirm")}</button>
            </form>
          )
          : (
            <>
              <p>{t("account.emailOtpOff")}</p>
              <button
                type="button"
                class="secondary"
                onClick={async () => {
                  const answer = await api("POST", "/profile/factors/email-otp", {});
                  if (answer.status === 202) setEmailOtpPending(true);
                  else setError(t("common.error"));
                }}
              >
                {t("account.emailOtpEnroll")}
              </button>
            </>
          )}
        <h3>{t("account.passkeys")}</h3>
        {passkeys.length === 0 ? <p>{t("account.passkeyNone")}</p> : (
          <ul id="passkeys" class="sessions">
            {passkeys.map((p) => (
              <li key={p.id}>
                {renaming?.id === p.id
                  ? (
                    <form
                      class="inline"
                      onSubmit={async (e: Event) => {
                        e.preventDefault();
                        const answer = await api("PATCH", `/auth/passkey/${encodeURIComponent(p.id)}`, {
                          name: renaming.name.trim() || null,
                        });
                        if (answer.status !== 200) return setError(t("common.error"));
                        setRenaming(null);
                        setMessage(t("account.passkeyRenamed"));
                        await load();
                      }}
                    >
                      <Field
                        id="passkey-rename"
                        label={t("account.passkeyNewName", { name: renaming.old })}
                        maxLength={100}
                        value={renaming.name}
                        onValue={(name) => setRenaming({ ...renaming, name })}
                      />
                      <button type="submit">{t("account.passkeySave")}</button>
                      <button type="button" class="secondary" onClick={() => setRenaming(null)}>
                        {t("common.cancel")}
                      </button>
                    </form>
                  )
                  : <span>{p.name ?? t("account.passkeyUnnamed")}</span>}
                {renaming?.id === p.id ? null : (
                  <button
                    type="button"
                    class="secondary"
                    onClick={() => {
                      const old = p.name ?? t("account.passkeyUnnamed");
                      setRenaming({ id: p.id, old, name: p.name ?? "" });
                    }}
                  >
                    {t("account.passkeyRename")}
                  </button>
                )}
                <button
                  type="button"
                  class="secondary"
                  onClick={async () => {
                    await api("DELETE", `/auth/passkey/${encodeURIComponent(p.id)}`);
                    await load();
                  }}
                >
                  {t("account.passkeyRemove")}
                </button>
              </li>
            ))}
          </ul>
        )}
        {passkeysAvailable()
          ? (
            <>
              <Field
                id="passkey-name"
                label={t("account.passkeyName")}
                maxLength={100}
                value={passkeyName}
                onValue={setPasskeyName}
              />
              <button type="button" id="passkey-add" onClick={addPasskey}>{t("account.passkeyAdd")}</button>
            </>
          )
          : null}
        <h3>{t("account.recovery")}</h3>
        <p>{t("account.recoveryRemaining", { n: factors?.recoveryCodesRemaining ?? 0 })}</p>
        {codes
          ? (
            <div class="codes">
              <p>{t("account.recoveryOnce")}</p>
              <ul id="recovery-codes">
                {codes.map((c) => (
                  <li key={c}>
                    <code>{c}</code>
                  </li>
                ))}
              </ul>
              <button type="button" class="secondary" onClick={download}>
                {t("account.recoveryDownload")}
              </button>
            </div>
          )
          : proofNeeded
          ? (
            <form id="recovery-proof" onSubmit={newCodes}>
              <Field
                id="recovery-proof-code"
                label={t("recovery.proofLabel")}
                autocomplete="one-time-code"
                inputMode="numeric"
                value={proofCode}
                onValue={setProofCode}
              />
              <button type="submit">{t("account.recoveryGenerate")}</button>
            </form>
          )
          : (
            <button type="button" class="secondary" onClick={() => newCodes()}>
              {t("account.recoveryGenerate")}
            </button>
          )}
      </section>
      <section aria-labelledby="sessions-h">
        <h2 id="sessions-h">{t("account.sessions")}</h2>
        <ul class="sessions">
          {sessions.map((s) => (
            <li key={s.id}>
              <span>
                <span title={s.deviceDescription ?? undefined}>
                  {line(
                    describeUserAgent(s.deviceDescription, lang) ?? t("account.unknownDevice"),
                    s.ipAddress,
                    timeAgo(s.lastSeenAt, Date.now(), lang),
                  )}
                </span>
                {s.current ? <strong>{` (${t("account.thisDevice")})`}</strong> : null}
              </span>
              {s.current ? null : (
                <button
                  type="button"
                  class="secondary"
                  onClick={async () => {
                    await api("DELETE", `/profile/sessions/${encodeURIComponent(s.id)}`);
                    await load();
                  }}
                >
                  {t("account.signOutSession")}
                </button>
              )}
            </li>
          ))}
        </ul>
      </section>
      {apps === null ? null : (
        <section aria-labelledby="apps-h">
          <h2 id="apps-h">{t("account.apps")}</h2>
          {apps.length === 0 ? <p>{t("account.appsNone")}</p> : (
            <ul id="apps" class="sessions">
              {apps.map((app) => (
                <li key={app.clientId}>
                  <span>
                    <strong>{app.clientName}</strong> ·{" "}
                    {t("account.appScopes", { scopes: app.scopes.join(", ") })}
                    {" · "}
                    {t("account.appGranted", { time: new Date(app.grantedAt).toLocaleString(lang) })}
                    {app.lastUsedAt
                      ? ` · ${
                        t("account.appLastUsed", { time: new Date(app.lastUsedAt).toLocaleString(lang) })
                      }`
                      : ""}
                  </span>
                  <button
                    type="button"
                    class="secondary"
                    onClick={async () => {
                      setError("");
                      const answer = await api("DELETE", `/profile/apps/${encodeURIComponent(app.clientId)}`);
                      if (answer.status !== 204) return setError(t("common.error"));
                      setMessage(t("account.appRevoked", { name: app.clientName }));
                      await load();
                    }}
                  >
                    {t("account.appRevoke", { name: app.clientName })}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
      <section aria-labelledby="events-h">
        <h2 id="events-h">{t("account.events")}</h2>
        {events.length === 0 ? <p>{t("account.eventsNone")}</p> : (
          <ul id="security-events" class="sessions">
            {events.map((e) => (
              <li key={e.id}>
                <span>
                  <span title={e.kind}>{describeEvent(e.kind, lang)}</span>
                  {` · ${line(e.ipAddress, timeAgo(e.occurredAt, Date.now(), lang))}`}
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
    </Shell>
  );
}

// ---- the app ----

function App(props: { profile: Profile | null }) {
  const page = pageName();
  const signedIn = props.profile !== null;
  switch (page) {
    case "sign-in":
      return <SignIn />;
    case "forgot-password":
      return <Forgot />;
    case "reset-password":
      return (
        <PasswordWithToken
          title="reset.title"
          submit="reset.submit"
          done="reset.done"
          invalid="reset.invalid"
          path="/auth/password/reset"
        />
      );
    case "accept-invitation":
      return (
        <PasswordWithToken
          title="invite.title"
          intro="invite.intro"
          submit="invite.submit"
          done="invite.done"
          invalid="invite.invalid"
          path="/auth/invitation/accept"
          withName
          withPasskey
          describeInvitation
        />
      );
    case "sign-up":
      return <SignUp />;
    case "complete-sign-up":
      return (
        <PasswordWithToken
          title="complete.title"
          intro="complete.intro"
          submit="complete.submit"
          done="complete.done"
          invalid="complete.invalid"
          path="/auth/invitation/accept"
          withName
          withPasskey
        />
      );
    case "verify-email":
      return <VerifyEmail />;
    case "impersonation-consent":
      return <ImpersonationConsent signedIn={signedIn} />;
    default:
      if (props.profile === null) {
        go("sign-in", { notice: query("notice") });
        return null;
      }
      return <Account profile={props.profile} />;
  }
}

async function start(): Promise<void> {
  const [settingsAnswer, me] = await Promise.all([
    api("GET", `/auth/hosted-settings${realmQuery()}`),
    ["sign-in", "forgot-password", "sign-up", "complete-sign-up"].includes(pageName())
      ? Promise.resolve(null)
      : api("GET", "/profile/me"),
  ]);
  if (settingsAnswer.status === 200) settings = settingsAnswer.body;
  const profile = me !== null && me.status === 200 ? me.body as Profile : null;
  if (profile !== null && !REALM && profile.realmId) {
    // Signed in: the user's own realm brands the pages (and links carry it on).
    const own = await api("GET", `/auth/hosted-settings?realm=${encodeURIComponent(profile.realmId)}`);
    if (own.status === 200) settings = own.body;
  }
  REALM = settings.realm ?? REALM;
  // The brand colour goes through the CSSOM (a CSS custom property): the CSP allows no inline style.
  document.documentElement.style.setProperty("--brand", settings.color);
  const root = document.getElementById("root")!;
  render(<App profile={profile} />, root);
  if (query("notice") === "signed-out") {
    const note = document.createElement("p");
    note.className = "alert ok";
    note.id = "signed-out-note";
    note.setAttribute("role", "status");
    note.textContent = t("account.signedOut");
    root.querySelector("main")?.prepend(note);
    // Said once: not again on a reload, and gone as soon as the next sign-in goes on (its second
    // step is the same page; issue 27).
    const url = new URL(location.href);
    url.searchParams.delete("notice");
    history.replaceState(history.state, "", url.href);
    const dismiss = () => note.remove();
    root.addEventListener("submit", dismiss, { once: true, capture: true });
    root.addEventListener("click", (e) => {
      if ((e.target as Element | null)?.closest?.("button")) dismiss();
    }, { capture: true });
  }
}

start();
