/**
 * What the admin API route modules are built from: the shared services of a svc server.
 * `svcRoutes` assembles it from the auth and login stacks; tests build it the same way.
 *
 * @module
 */
import type { AccountFlows } from "../../core/accounts/flows.ts";
import type { AbuseGate } from "../../core/abuse/gate.ts";
import type { EventPublisher } from "../../core/events/publisher.ts";
import type { KeyRing } from "../../core/keys/ring.ts";
import type { PasswordService } from "../../core/passwords/service.ts";
import type { SessionEndAnnouncer } from "../../core/sessions/ended.ts";
import type { SubjectSnapshots } from "../../core/snapshots/service.ts";
import type { Storage } from "../../core/storage/storage.ts";

/** Resolves the TXT records of a DNS name (each record a list of strings), for domain verification. */
export type TxtResolver = (name: string) => Promise<string[][]>;

/** The dependencies of every admin route module. */
export interface AdminRouteDeps {
  readonly storage: Storage;
  readonly snapshots: SubjectSnapshots;
  /** Events recorded in the mutation's transaction (outbox and ledger). */
  readonly publisher: EventPublisher;
  /** Hashes new passwords and service-account secrets (argon2id on the worker pool). */
  readonly passwords: PasswordService;
  /** Told of sessions an admin action ends, so their access tokens stop on every instance at once. */
  readonly sessions?: SessionEndAnnouncer;
  /** The realms' signing keys. */
  readonly keys: KeyRing;
  /** The login abuse gate (break-glass drills are password checks and share its lockout). */
  readonly abuse?: AbuseGate;
  /** DNS TXT lookups of the runtime (domain verification); absent: only the audited admin override verifies. */
  readonly resolveTxt?: TxtResolver;
  /** The account flows: email re-verification after an address change, notification mails to users. */
  readonly accounts: AccountFlows;
  /** The permissions the installed plugins declare: the authority rule judges them with svc's. */
  readonly pluginPermissions?: readonly string[];
}
