/**
 * Mail for svc: the transport interface, the outbox transport and the message builders.
 *
 * @module
 */
export {
  assertMailAddress,
  type MailAddressee,
  type MailKind,
  type MailMessage,
  type MailTransport,
  MemoryMailTransport,
} from "./transport.ts";
export { createOutboxTransport } from "./outbox.ts";
export {
  DEFAULT_MAIL_LINK_PATHS,
  emailOtpMessage,
  type EmailOtpMessageInput,
  emailVerificationMessage,
  escapeHtml,
  formatDuration,
  invitationMessage,
  type InvitationMessageInput,
  linkUrl,
  type MailConfigSource,
  type MailLinkPaths,
  type MailMessages,
  mailMessages,
  type MailSettings,
  mailSettingsFromConfig,
  type NewDeviceAlertInput,
  newDeviceAlertMessage,
  passwordResetMessage,
  type TokenLinkMessageInput,
} from "./messages.ts";
