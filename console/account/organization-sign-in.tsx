/**
 * Home-realm discovery on the sign-in page: once an email address is typed, asks svc
 * (`POST /auth/sign-in/discover`) whether its domain signs in through an organization's own
 * identity provider; when it does, offers "Continue with your organization's sign-in" (a link to
 * the plugin's start route). The answer depends on the domain only, never on the account.
 *
 * @module
 */
import { useEffect, useState } from "hono/jsx/dom";
import { api } from "./api.ts";

const TEXTS = {
  en: {
    continue: "Continue with your organization's sign-in",
    hint: "Your organization signs you in with its own sign-in page.",
  },
  fr: {
    continue: "Continuer avec la connexion de votre organisation",
    hint: "Votre organisation vous connecte avec sa propre page de connexion.",
  },
} as const;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Where svc sends this email to sign in, or null (asked after a short pause in typing). */
export function useOrganizationSignIn(email: string, returnTo: string): string | null {
  const [redirect, setRedirect] = useState<string | null>(null);
  useEffect(() => {
    const typed = email.trim();
    if (!EMAIL.test(typed)) {
      setRedirect(null);
      return;
    }
    let current = true;
    const timer = setTimeout(async () => {
      const answer = await api("POST", "/auth/sign-in/discover", {
        email: typed,
        ...(returnTo ? { returnTo } : {}),
      }).catch(() => null);
      if (!current) return;
      const target = answer?.status === 200 ? answer.body?.redirect : undefined;
      // Only a path of this origin: the answer never sends the browser elsewhere directly.
      setRedirect(typeof target === "string" && /^\/(?![/\\])/.test(target) ? target : null);
    }, 300);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [email, returnTo]);
  return redirect;
}

/** The "Continue with your organization's sign-in" offer, when the email's domain has one. */
export function OrganizationSignIn(props: { email: string; returnTo: string; lang: "en" | "fr" }) {
  const redirect = useOrganizationSignIn(props.email, props.returnTo);
  if (redirect === null) return null;
  const text = TEXTS[props.lang];
  return (
    <div class="organization-sign-in" role="region" aria-label={text.continue}>
      <p class="hint">{text.hint}</p>
      <a id="organization-sign-in" class="button" href={redirect}>{text.continue}</a>
    </div>
  );
}
