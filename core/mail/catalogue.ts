/**
 * Every text svc mails, in one place: English and French, per message. Builders in
 * `messages.ts` pick the catalogue of the recipient's language (`MailLocale`) and fill in the
 * product name, durations and (already cleaned) free text; they never hold words of their own.
 *
 * @module
 */

/** The languages mail is written in (English by default). */
export type MailLocale = "en" | "fr";

/** The texts of every message of one language. */
export interface MailTexts {
  readonly units: readonly [string, string, string, string];
  readonly labels: {
    readonly time: string;
    readonly device: string;
    readonly ip: string;
    readonly location: string;
  };
  readonly linkOnce: (ttl: string) => string;
  /** How each resettable sign-in method is named to the user (factors-reset mail). */
  readonly factorLabels: {
    readonly totp: string;
    readonly email_otp: string;
    readonly passkeys: string;
    readonly recovery_codes: string;
  };
  readonly emailOtp: {
    subject(product: string): string;
    intro(product: string): string;
    expires(ttl: string, product: string): string;
    ignore: string;
  };
  readonly passwordReset: {
    subject(product: string): string;
    intro(product: string): string;
    action: string;
    ignore: string;
  };
  readonly emailVerification: {
    subject(product: string): string;
    intro(product: string): string;
    action: string;
    ignore: string;
  };
  readonly invitation: {
    subject(where: string): string;
    where(org: string, product: string): string;
    intro(inviter: string, where: string): string;
    actionExisting: string;
    actionNew: string;
    ignore: string;
  };
  readonly signUp: {
    subject(product: string): string;
    intro(product: string): string;
    action: string;
    ignore: string;
  };
  readonly signUpExisting: {
    subject(product: string): string;
    intro(product: string): string;
    action: string;
    ignore: string;
  };
  readonly emailChange: {
    subject(product: string): string;
    intro(product: string): string;
    action: string;
    ignore: string;
  };
  readonly emailChangeInUse: {
    subject(product: string): string;
    intro(product: string): string;
    ignore: string;
  };
  readonly newDeviceAlert: {
    subject(product: string): string;
    intro(product: string): string;
    you: string;
    notYou: string;
  };
  readonly loginBlockedAlert: {
    subject(product: string): string;
    intro(product: string): string;
    you: string;
    notYou: string;
  };
  readonly factorsReset: {
    subject(product: string): string;
    intro(product: string): string;
    again: string;
    notYou: string;
  };
  readonly impersonationConsent: {
    subject(product: string): string;
    anAdministrator: string;
    intro(actor: string, product: string, duration: string): string;
    reason(reason: string): string;
    action: string;
    ignore: string;
  };
}

const en: MailTexts = {
  units: ["day", "hour", "minute", "second"],
  labels: { time: "Time", device: "Device", ip: "IP address", location: "Location" },
  linkOnce: (ttl) => `The link works once and expires in ${ttl}.`,
  factorLabels: {
    totp: "authenticator app (TOTP)",
    email_otp: "email codes",
    passkeys: "passkeys",
    recovery_codes: "recovery codes",
  },
  emailOtp: {
    subject: (p) => `Your ${p} verification code`,
    intro: (p) => `Your ${p} verification code is:`,
    expires: (ttl, p) => `It expires in ${ttl}. Never share it: ${p} will never ask you for it.`,
    ignore: "If you did not try to sign in, ignore this message and consider changing your password.",
  },
  passwordReset: {
    subject: (p) => `Reset your ${p} password`,
    intro: (p) => `Someone asked to reset the password of your ${p} account.`,
    action: "Choose a new password:",
    ignore: "If you did not ask for this, ignore this message: your password stays unchanged.",
  },
  emailVerification: {
    subject: (p) => `Verify your email address for ${p}`,
    intro: (p) => `Confirm that this address belongs to your ${p} account:`,
    action: "Verify your email address:",
    ignore: "If you did not create an account, ignore this message.",
  },
  invitation: {
    subject: (where) => `You are invited to ${where}`,
    where: (org, p) => (org ? `${org} on ${p}` : p),
    intro: (inviter, where) => `${inviter ? `${inviter} invited you` : "You are invited"} to join ${where}.`,
    actionExisting: "Sign in with your account and accept the invitation:",
    actionNew: "Accept the invitation and choose a password or a passkey:",
    ignore: "If you did not expect this invitation, ignore this message.",
  },
  signUp: {
    subject: (p) => `Finish creating your ${p} account`,
    intro: (p) => `Someone (probably you) asked to create a ${p} account with this address.`,
    action: "Finish creating your account:",
    ignore: "If it was not you, ignore this message: no account is made.",
  },
  signUpExisting: {
    subject: (p) => `Someone tried to sign up to ${p}`,
    intro: (p) => `Someone tried to create a ${p} account with this address, which already has one.`,
    action: "If it was you, sign in (or reset your password from the page):",
    ignore: "If not, ignore this message: nothing changed on your account.",
  },
  emailChange: {
    subject: (p) => `Confirm your new email address for ${p}`,
    intro: (p) => `An administrator asked to make this the address of your ${p} account.`,
    action: "Confirm the change:",
    ignore: "If you do not expect this, ignore this message: the account keeps its current address.",
  },
  emailChangeInUse: {
    subject: (p) => `Your email address was given for another ${p} account`,
    intro: (p) =>
      `An administrator asked to give this address to another ${p} account. This address already has an account, so nothing changed.`,
    ignore: "You need to do nothing; if you do not expect this, tell your administrator.",
  },
  newDeviceAlert: {
    subject: (p) => `New sign-in to your ${p} account`,
    intro: (p) => `Your ${p} account was just signed in to from a device it had not seen before.`,
    you: "If this was you, there is nothing to do.",
    notYou: "If it was not, change your password right away and review your sign-in methods.",
  },
  loginBlockedAlert: {
    subject: (p) => `Blocked sign-in to your ${p} account`,
    intro: (p) =>
      `Someone signed in to your ${p} account with your correct password, and ${p} blocked it as too risky.`,
    you: "If this was you, sign in again from a device or network you usually use.",
    notYou: "If it was not, your password is known to someone else: change it right away.",
  },
  factorsReset: {
    subject: (p) => `Sign-in methods of your ${p} account were reset`,
    intro: (p) => `An administrator removed these sign-in methods from your ${p} account:`,
    again: "Sign in and set them up again from your account's security settings.",
    notYou: "If you did not ask for this, contact your administrator right away.",
  },
  impersonationConsent: {
    subject: (p) => `Approve access to your ${p} account`,
    anAdministrator: "An administrator",
    intro: (actor, p, d) => `${actor} asks to act as you in ${p} for ${d}.`,
    reason: (r) => `Reason given: ${r}`,
    action: "Sign in and approve the request:",
    ignore: "If you do not expect this, ignore this message: nothing happens without your approval.",
  },
};

const fr: MailTexts = {
  units: ["jour", "heure", "minute", "seconde"],
  labels: { time: "Heure", device: "Appareil", ip: "Adresse IP", location: "Lieu" },
  linkOnce: (ttl) => `Le lien ne sert qu’une fois et expire dans ${ttl}.`,
  factorLabels: {
    totp: "application d’authentification (TOTP)",
    email_otp: "codes par e-mail",
    passkeys: "clés d’accès",
    recovery_codes: "codes de récupération",
  },
  emailOtp: {
    subject: (p) => `Votre code de vérification ${p}`,
    intro: (p) => `Votre code de vérification ${p} est :`,
    expires: (ttl, p) =>
      `Il expire dans ${ttl}. Ne le communiquez jamais : ${p} ne vous le demandera jamais.`,
    ignore:
      "Si vous n’avez pas essayé de vous connecter, ignorez ce message et pensez à changer votre mot de passe.",
  },
  passwordReset: {
    subject: (p) => `Réinitialisez votre mot de passe ${p}`,
    intro: (p) => `Quelqu’un a demandé à réinitialiser le mot de passe de votre compte ${p}.`,
    action: "Choisissez un nouveau mot de passe :",
    ignore:
      "Si vous n’êtes pas à l’origine de cette demande, ignorez ce message : votre mot de passe ne change pas.",
  },
  emailVerification: {
    subject: (p) => `Vérifiez votre adresse e-mail pour ${p}`,
    intro: (p) => `Confirmez que cette adresse appartient à votre compte ${p} :`,
    action: "Vérifier votre adresse e-mail :",
    ignore: "Si vous n’avez pas créé de compte, ignorez ce message.",
  },
  invitation: {
    subject: (where) => `Vous êtes invité à rejoindre ${where}`,
    where: (org, p) => (org ? `${org} sur ${p}` : p),
    intro: (inviter, where) =>
      `${inviter ? `${inviter} vous invite` : "Vous êtes invité"} à rejoindre ${where}.`,
    actionExisting: "Connectez-vous avec votre compte et acceptez l’invitation :",
    actionNew: "Acceptez l’invitation et choisissez un mot de passe ou une clé d’accès :",
    ignore: "Si vous n’attendiez pas cette invitation, ignorez ce message.",
  },
  signUp: {
    subject: (p) => `Terminez la création de votre compte ${p}`,
    intro: (p) => `Quelqu’un (vous, sans doute) a demandé à créer un compte ${p} avec cette adresse.`,
    action: "Terminez la création du compte :",
    ignore: "Si ce n’était pas vous, ignorez ce message : aucun compte ne sera créé.",
  },
  signUpExisting: {
    subject: (p) => `Tentative d’inscription à ${p}`,
    intro: (p) => `Quelqu’un a essayé de créer un compte ${p} avec cette adresse, qui en a déjà un.`,
    action: "Si c’était vous, connectez-vous (ou réinitialisez votre mot de passe depuis la page) :",
    ignore: "Sinon, ignorez ce message : rien n’a changé sur votre compte.",
  },
  emailChange: {
    subject: (p) => `Confirmez votre nouvelle adresse e-mail pour ${p}`,
    intro: (p) => `Un administrateur a demandé que cette adresse devienne celle de votre compte ${p}.`,
    action: "Confirmer le changement :",
    ignore: "Si vous ne vous y attendez pas, ignorez ce message : le compte garde son adresse actuelle.",
  },
  emailChangeInUse: {
    subject: (p) => `Votre adresse e-mail a été indiquée pour un autre compte ${p}`,
    intro: (p) =>
      `Un administrateur a demandé d’attribuer cette adresse à un autre compte ${p}. Elle a déjà un compte : rien n’a changé.`,
    ignore: "Vous n’avez rien à faire ; si vous ne vous y attendez pas, prévenez votre administrateur.",
  },
  newDeviceAlert: {
    subject: (p) => `Nouvelle connexion à votre compte ${p}`,
    intro: (p) => `Votre compte ${p} vient d’être utilisé depuis un appareil jamais vu auparavant.`,
    you: "Si c’était vous, il n’y a rien à faire.",
    notYou: "Sinon, changez votre mot de passe tout de suite et vérifiez vos méthodes de connexion.",
  },
  loginBlockedAlert: {
    subject: (p) => `Connexion bloquée à votre compte ${p}`,
    intro: (p) =>
      `Quelqu’un s’est connecté à votre compte ${p} avec votre mot de passe correct, et ${p} l’a bloqué comme trop risqué.`,
    you: "Si c’était vous, reconnectez-vous depuis un appareil ou un réseau habituel.",
    notYou: "Sinon, quelqu’un d’autre connaît votre mot de passe : changez-le tout de suite.",
  },
  factorsReset: {
    subject: (p) => `Les méthodes de connexion de votre compte ${p} ont été réinitialisées`,
    intro: (p) => `Un administrateur a retiré ces méthodes de connexion de votre compte ${p} :`,
    again: "Connectez-vous et configurez-les à nouveau depuis les réglages de sécurité de votre compte.",
    notYou: "Si vous ne l’avez pas demandé, contactez votre administrateur tout de suite.",
  },
  impersonationConsent: {
    subject: (p) => `Approuvez l’accès à votre compte ${p}`,
    anAdministrator: "Un administrateur",
    intro: (actor, p, d) => `${actor} demande à agir en votre nom dans ${p} pendant ${d}.`,
    reason: (r) => `Motif donné : ${r}`,
    action: "Connectez-vous et approuvez la demande :",
    ignore: "Si vous ne vous y attendiez pas, ignorez ce message : rien ne se passe sans votre accord.",
  },
};

/** The catalogues by language. */
export const MAIL_CATALOGUE: Readonly<Record<MailLocale, MailTexts>> = { en, fr };

/** The texts of `locale` (English when absent). */
export function mailTexts(locale: MailLocale | undefined): MailTexts {
  return MAIL_CATALOGUE[locale ?? "en"];
}
