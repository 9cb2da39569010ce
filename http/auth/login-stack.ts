/**
 * The password login stack, assembled from the configuration beside the auth stack: password
 * hashing, the abuse and risk gates, known devices, TOTP, email OTP, recovery codes, mail, the
 * login pipeline, the account flows, the bootstrap administrator and their routes (login,
 * MFA, account flows, the invitation admin endpoint, profile factors). `svc start`, tests and
 * benchmarks build it the same way.
 *
 * @module
 */
import { AbuseGate } from "../../core/abuse/gate.ts";
import { type CaptchaProvider, captchaProviderFromConfig } from "../../core/abuse/captcha.ts";
import type { OutboundFetch } from "../../core/net/outbound.ts";
import { type CounterStore, MemoryCounterStore } from "../../core/abuse/counter-store.ts";
import { RequestThrottle } from "../../core/abuse/request-throttle.ts";
import { AccountFlows } from "../../core/accounts/flows.ts";
import { bootstrapAdmin, type BootstrapReport } from "../../core/accounts/bootstrap.ts";
import type { Clock } from "../../core/clock.ts";
import type { SvcConfig } from "../../core/config/mod.ts";
import { SubjectCrypto } from "../../core/crypto/subject-keys.ts";
import { KnownDevices } from "../../core/devices/known-devices.ts";
import type { EventSink } from "../../core/events/sink.ts";
import { LoginPipeline, type SecurityEventWriter } from "../../core/login/pipeline.ts";
import { createOutboxTransport } from "../../core/mail/outbox.ts";
import { mailMessages, mailSettingsFromConfig, realmMessages } from "../../core/mail/messages.ts";
import type { MailTransport } from "../../core/mail/transport.ts";
import { EmailOtpService } from "../../core/mfa/email-otp.ts";
import { RecoveryCodeService } from "../../core/mfa/recovery-codes.ts";
import { argon2idParamsFromConfig } from "../../core/passwords/argon2-params.ts";
import { passwordCostCeilingsFromConfig } from "../../core/passwords/cost.ts";
import { createPasswordHasher } from "../../core/passwords/create.ts";
import type { PasswordHasher } from "../../core/passwords/hasher.ts";
import { PasswordService } from "../../core/passwords/service.ts";
import type { RandomSource } from "../../core/random.ts";
import { type ExternalRiskProvider, RiskGate } from "../../core/risk/gate.ts";
import type { GeoLocator, IpReputation, LoginHistory } from "../../core/risk/providers.ts";
import type { SubjectSnapshots } from "../../core/snapshots/service.ts";
import { type SecretCipher, TotpService } from "../../core/totp/service.ts";
import type { Storage } from "../../core/storage/storage.ts";
import type { RouteInstaller } from "../app.ts";
import { accountRoutes } from "../routes/account.ts";
import { factorRoutes } from "../routes/factors.ts";
import { loginRoutes } from "../routes/login.ts";
import { cookieSettings } from "./cookies.ts";
import type { SignInResponder } from "./login-response.ts";
import type { AuthStack } from "./stack.ts";

/** What the login stack is built from. */
export interface LoginStackOptions {
  /** The validated configuration. */
  config: SvcConfig;
  /** The stores. */
  storage: Storage;
  /** The source of the current time. */
  clock: Clock;
  /** The source of random bytes. */
  random: RandomSource;
  /** Tokens and sessions. */
  auth: Pick<AuthStack, "tokens" | "sessions"> & Partial<Pick<AuthStack, "dpop">>;
  /** Writes events durably (an `EventPublisher`): the ledger with origins, webhooks, the hub. */
  events: SecurityEventWriter & EventSink;
  /** Fences the invitation endpoint. */
  snapshots: SubjectSnapshots;
  /** Password hashing built beforehand (svc start: for the bootstrap before listening); default: a new one on `hasher`. */
  passwords?: PasswordService;
  /** Where argon2id runs (default: `createPasswordHasher` with `config.password.hashWorkers`). */
  hasher?: PasswordHasher;
  /** The abuse counters (default: in memory, one instance; svc start passes the SQL store). */
  counters?: CounterStore;
  /** The risk gate's login history (default: `storage.loginHistory`, kept by the ledger's sign-in appends). */
  history?: LoginHistory;
  /** The offline risk providers (from `loadRiskProviders`). */
  geo?: GeoLocator | null;
  /** The IP reputation list (from `loadRiskProviders`), or none. */
  reputation?: IpReputation | null;
  /** An external risk score provider composed with svc's own score, or none. */
  external?: ExternalRiskProvider | null;
  /** The CAPTCHA provider (default: from `config.abuse.captcha`, calling siteverify through `outbound`). */
  captcha?: CaptchaProvider | null;
  /** svc's outbound guard, for the configured CAPTCHA provider's siteverify calls. */
  outbound?: OutboundFetch;
  /** Mail (default: the outbox). */
  mail?: MailTransport;
  /** Seals TOTP secrets (default: the subject-key cipher). */
  cipher?: SecretCipher;
  /** Where failures that never reach a client are reported. */
  onError?: (line: string) => void;
}

/** The assembled login stack. */
export interface LoginStack {
  /** Password hashing and verification. */
  readonly passwords: PasswordService;
  /** The abuse gate (step 1 of a login). */
  readonly abuse: AbuseGate;
  /** The risk gate (step 4 of a login). */
  readonly risk: RiskGate;
  /** Known devices and the new-device alert. */
  readonly devices: KnownDevices;
  /** TOTP enrollment and verification. */
  readonly totp: TotpService;
  /** Emailed one-time codes. */
  readonly emailOtp: EmailOtpService;
  /** MFA recovery codes. */
  readonly recoveryCodes: RecoveryCodeService;
  /** Where svc's mail goes (the outbox). */
  readonly mail: MailTransport;
  /** The password login pipeline. */
  readonly pipeline: LoginPipeline;
  /** Forgot and reset password, email verification, invitations. */
  readonly accounts: AccountFlows;
  /** Login, MFA, account, invitation and factor routes. */
  readonly routes: RouteInstaller[];
  /** Ensures the bootstrap administrator of `realmId` when the configuration names one; null otherwise. */
  bootstrap(realmId: string): Promise<BootstrapReport | null>;
  /** Resolves once the work started after answers (forgot-password mail, blocked-sign-in alerts) has finished. */
  idle(): Promise<void>;
  /** Waits for that work, then releases the password workers. */
  close(): Promise<void>;
}

/** Builds the login stack. */
export function createLoginStack(options: LoginStackOptions): LoginStack {
  const { config, storage, clock, random, events } = options;
  const report = (message: string, error?: unknown) =>
    options.onError?.(
      error === undefined ? message : `${message}: ${error instanceof Error ? error.message : String(error)}`,
    );
  const passwords = options.passwords ?? new PasswordService({
    hasher: options.hasher ??
      createPasswordHasher({
        workers: config.password.hashWorkers,
        idleMs: config.password.workerIdleSeconds * 1000,
      }),
    params: argon2idParamsFromConfig(config.password),
    ceilings: passwordCostCeilingsFromConfig(config.password),
    random,
  });
  const counters = options.counters ?? new MemoryCounterStore({ clock });
  const abuse = AbuseGate.fromConfig(config.abuse, {
    store: counters,
    clock,
    sink: events,
    captcha: options.captcha !== undefined
      ? options.captcha
      : captchaProviderFromConfig(config.abuse.captcha, { fetch: options.outbound }),
  });
  const mail = options.mail ?? createOutboxTransport(storage.mailOutbox);
  const messages = mailMessages(mailSettingsFromConfig(config));
  const devices = new KnownDevices({
    store: storage.knownDevices,
    sink: events,
    clock,
    async onNewDevice(alert) {
      const user = await storage.users.get(alert.userId);
      if (user === null) return;
      const own = realmMessages(messages, await storage.realms.get(user.realmId));
      await mail.send(
        own.newDeviceAlert({
          to: user.email,
          seenAt: alert.device.firstSeenAt,
          device: alert.device.description ?? undefined,
          ipAddress: alert.ip ?? undefined,
          location: alert.location?.country || undefined,
          locale: alert.locale ?? undefined,
        }),
        { realmId: user.realmId, userId: user.id },
      );
    },
    onAlertError: (error) => report("login: new-device alert not sent", error),
  });
  const risk = RiskGate.fromConfig(config.risk, {
    clock,
    sink: events,
    devices,
    geo: options.geo ?? null,
    reputation: options.reputation ?? null,
    history: options.history ?? storage.loginHistory,
    external: options.external ?? null,
  });
  const totp = new TotpService({
    store: storage.totpEnrollments,
    cipher: options.cipher ?? new SubjectCrypto(storage.subjectKeys, random),
    clock,
    random,
    issuer: config.relyingParty.name.replaceAll(":", " "),
    settings: config.totp,
  });
  const emailOtp = new EmailOtpService({
    store: storage.emailOtp,
    mail,
    mailSettings: messages.settings,
    clock,
    random,
    settings: config.emailOtp,
  });
  const recoveryCodes = new RecoveryCodeService({ store: storage.recoveryCodes, random });
  const pending = new Set<Promise<unknown>>();
  const background = (work: () => Promise<unknown>) => {
    const task = work().catch((error) => report("background work failed", error)).finally(() =>
      pending.delete(task)
    );
    pending.add(task);
  };
  const pipeline = new LoginPipeline({
    storage,
    passwords,
    abuse,
    risk,
    devices,
    totp,
    emailOtp,
    recoveryCodes,
    tokens: options.auth.tokens,
    events,
    clock,
    historyInStorage: options.history === undefined,
    // Mailed after the answer, so the refusal takes no longer than a wrong password's.
    onRiskBlock(alert) {
      background(async () =>
        mail.send(
          realmMessages(messages, await storage.realms.get(alert.user.realmId)).loginBlockedAlert({
            to: alert.user.email,
            attemptedAt: alert.at,
            device: alert.device ?? undefined,
            ipAddress: alert.ip ?? undefined,
            locale: alert.locale ?? undefined,
          }),
          { realmId: alert.user.realmId, userId: alert.user.id },
        )
      );
      return Promise.resolve();
    },
    onError: report,
  });
  const accounts = new AccountFlows({
    storage,
    passwords,
    tokens: options.auth.tokens,
    sessions: options.auth.sessions,
    mail,
    messages,
    events,
    clock,
  });
  const responder: SignInResponder = {
    sessions: options.auth.sessions,
    cookies: cookieSettings(config),
    random,
    refreshTokenTtlSeconds: config.tokens.refreshTokenTtlSeconds,
    dpop: options.auth.dpop && { verifier: options.auth.dpop, baseUrl: config.server.baseUrl },
  };
  const idle = async () => {
    while (pending.size > 0) await Promise.allSettled([...pending]);
  };
  return {
    passwords,
    abuse,
    risk,
    devices,
    totp,
    emailOtp,
    recoveryCodes,
    mail,
    pipeline,
    accounts,
    routes: [
      loginRoutes({ pipeline, responder }),
      accountRoutes({
        accounts,
        realms: storage.realms,
        users: storage.users,
        snapshots: options.snapshots,
        throttle: new RequestThrottle({ store: counters, clock, sink: events, limits: config.throttle }),
        abuse,
        background,
      }),
      factorRoutes({
        totp,
        recoveryCodes,
        users: storage.users,
        emailOtp,
        emailOtpEnrollments: storage.emailOtpEnrollments,
        events,
        clock,
      }),
    ],
    async bootstrap(realmId) {
      const { adminEmail, adminPassword } = config.bootstrap;
      if (adminEmail === undefined || adminPassword === undefined) return null;
      return await bootstrapAdmin({ storage, passwords }, {
        realmId,
        email: adminEmail,
        password: adminPassword,
      });
    },
    idle,
    async close() {
      await idle();
      await passwords.close();
    },
  };
}
