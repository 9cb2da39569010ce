/**
 * What the account page says about sessions and security events (issue 27): "Chrome on Linux ·
 * 127.0.0.1 · 2 minutes ago" instead of the raw User-Agent and a date, and sentences ("New
 * sign-in from a new device") instead of event kinds, in the reader's language (en, fr).
 *
 * @module
 */

const BROWSERS: readonly (readonly [RegExp, string])[] = [
  [/\bEdg(?:e|A|iOS)?\//, "Edge"],
  [/\bOPR\/|\bOpera\b/, "Opera"],
  [/\bSamsungBrowser\//, "Samsung Internet"],
  [/\bFirefox\/|\bFxiOS\//, "Firefox"],
  [/\b(?:Headless)?Chrom(?:e|ium)\/|\bCriOS\//, "Chrome"],
  [/\bVersion\/[\d.]+.*\bSafari\//, "Safari"],
  [/^curl\//, "curl"],
];

const SYSTEMS: readonly (readonly [RegExp, string])[] = [
  [/\b(?:iPhone|iPad|iPod)\b/, "iOS"],
  [/\bAndroid\b/, "Android"],
  [/\bCrOS\b/, "ChromeOS"],
  [/\bWindows\b/, "Windows"],
  [/\bMac OS X\b|\bMacintosh\b/, "macOS"],
  [/\bLinux\b|\bX11\b/, "Linux"],
];

/** "Chrome on Linux" from a User-Agent; the browser or system alone when only one is known; null when neither. */
export function describeUserAgent(userAgent: string | null, lang: "en" | "fr"): string | null {
  if (!userAgent) return null;
  const browser = BROWSERS.find(([re]) => re.test(userAgent))?.[1];
  const system = SYSTEMS.find(([re]) => re.test(userAgent))?.[1];
  if (browser && system) return lang === "fr" ? `${browser} sur ${system}` : `${browser} on ${system}`;
  return browser ?? system ?? null;
}

/** "2 minutes ago", "yesterday", "just now": how long ago `at` was, from `now`. */
export function timeAgo(at: string | Date, now: number, lang: "en" | "fr"): string {
  const seconds = Math.round((now - new Date(at).getTime()) / 1000);
  const format = new Intl.RelativeTimeFormat(lang, { numeric: "auto" });
  if (seconds < 45) return format.format(0, "second");
  const steps: readonly (readonly [Intl.RelativeTimeFormatUnit, number])[] = [
    ["minute", 60],
    ["hour", 3600],
    ["day", 86400],
    ["week", 604800],
    ["month", 2629800],
    ["year", 31557600],
  ];
  let unit: Intl.RelativeTimeFormatUnit = "minute";
  let size = 60;
  for (const [name, length] of steps) {
    if (seconds >= length * 0.9) [unit, size] = [name, length];
  }
  return format.format(-Math.max(1, Math.round(seconds / size)), unit);
}

/** One line of a session or event: the parts that are known, joined by " · ". */
export function line(...parts: readonly (string | null | undefined)[]): string {
  return parts.filter((p): p is string => typeof p === "string" && p !== "").join(" · ");
}

const EVENTS: Readonly<Record<string, readonly [string, string]>> = {
  "login.succeeded": ["Signed in", "Connexion réussie"],
  "login.failed": ["A sign-in attempt failed", "Une tentative de connexion a échoué"],
  "login.new_device": ["New sign-in from a new device", "Nouvelle connexion depuis un nouvel appareil"],
  "mfa.challenged": ["A second step was asked at sign-in", "Une seconde étape a été demandée à la connexion"],
  "mfa.succeeded": ["Second step passed", "Seconde étape validée"],
  "mfa.failed": ["A second-step code was wrong", "Un code de seconde étape était incorrect"],
  "mfa.totp_enabled": ["Authenticator app turned on", "Application d’authentification activée"],
  "mfa.totp_disabled": ["Authenticator app turned off", "Application d’authentification désactivée"],
  "mfa.recovery_codes_generated": ["New recovery codes created", "Nouveaux codes de secours créés"],
  "passkey.registered": ["Passkey added", "Clé d’accès ajoutée"],
  "passkey.login": ["Signed in with a passkey", "Connexion avec une clé d’accès"],
  "passkey.removed": ["Passkey removed", "Clé d’accès supprimée"],
  "passkey.renamed": ["Passkey renamed", "Clé d’accès renommée"],
  "passkey.signcount_regression": [
    "A passkey looked cloned and was refused",
    "Une clé d’accès semblait copiée et a été refusée",
  ],
  "risk.evaluated": ["A sign-in was checked for risk", "Une connexion a été évaluée"],
  "token.refresh_reuse_detected": [
    "An old session token was reused; the session was ended",
    "Un ancien jeton de session a été réutilisé ; la session a été fermée",
  ],
  "user.created": ["Account created", "Compte créé"],
  "user.updated": ["Profile changed", "Profil modifié"],
  "user.invited": ["Invited", "Invitation envoyée"],
  "user.invitation_accepted": ["Invitation accepted", "Invitation acceptée"],
  "user.password_reset_requested": ["Password reset asked for", "Réinitialisation du mot de passe demandée"],
  "user.password_reset": ["Password changed by reset", "Mot de passe réinitialisé"],
  "user.email_verification_requested": ["Address verification sent", "Vérification de l’adresse envoyée"],
  "user.email_verified": ["Email address verified", "Adresse e-mail vérifiée"],
  "user.email_change_requested": ["Email change asked for", "Changement d’adresse demandé"],
  "user.email_changed": ["Email address changed", "Adresse e-mail modifiée"],
  "user.suspended": ["Account suspended", "Compte suspendu"],
  "user.reactivated": ["Account reactivated", "Compte réactivé"],
  "user.sessions_ended": ["All sessions ended", "Toutes les sessions ont été fermées"],
  "user.factors_reset": [
    "Second factors reset by an administrator",
    "Seconds facteurs réinitialisés par un administrateur",
  ],
  "user.org_joined": ["Joined an organization", "Organisation rejointe"],
  "user.org_left": ["Left an organization", "Organisation quittée"],
  "api_key.created": ["API key created", "Clé d’API créée"],
  "api_key.revoked": ["API key revoked", "Clé d’API révoquée"],
  "breakglass.login": ["Break-glass sign-in", "Connexion de secours (break-glass)"],
  "saml.sign_in": [
    "Signed in through your organization's single sign-on (SAML)",
    "Connexion par l’authentification unique de votre organisation (SAML)",
  ],
  "saml.linked": [
    "Your organization's single sign-on was linked to your account",
    "L’authentification unique de votre organisation a été liée à votre compte",
  ],
  "saml.provisioned": [
    "Account created by your organization's single sign-on",
    "Compte créé par l’authentification unique de votre organisation",
  ],
  "saml.refused": [
    "A single sign-on attempt was refused",
    "Une tentative d’authentification unique a été refusée",
  ],
  "impersonation.started": ["An administrator started acting as you", "Un administrateur agit en votre nom"],
  "impersonation.ended": [
    "An administrator stopped acting as you",
    "Un administrateur a cessé d’agir en votre nom",
  ],
  "impersonation.consent_requested": [
    "An administrator asked to act as you",
    "Un administrateur demande à agir en votre nom",
  ],
};

/** The sentence of an event kind; an unknown kind reads as itself, made readable ("federation linked"). */
export function describeEvent(kind: string, lang: "en" | "fr"): string {
  const known = EVENTS[kind];
  if (known) return known[lang === "fr" ? 1 : 0];
  const readable = kind.replace(/[._]/g, " ");
  return readable.charAt(0).toUpperCase() + readable.slice(1);
}
