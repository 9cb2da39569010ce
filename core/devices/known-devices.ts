/**
 * Known devices (spec 2.3, 6): one row per (user, device) keyed by the SHA-256 hex of the
 * device id (the server-issued `svc_device` cookie, an API client's `X-Svc-Device`, or a legacy
 * client fingerprint; the id itself is never stored), with first-seen and last-seen times. The risk gate asks {@link KnownDevices.isKnown} (read only) before the login
 * completes; once it completes, the pipeline calls {@link KnownDevices.recordLogin}. The first
 * sighting of a device emits `login.new_device` (a security-ledger kind) and calls the alert
 * hook (the new-device mail); a failing hook is reported, never fails the login.
 *
 * @module
 */
import type { MailLocale } from "../mail/catalogue.ts";
import type { Clock } from "../clock.ts";
import { sha256Hex } from "../digest.ts";
import type { EventSink } from "../events/sink.ts";
import type { KnownDeviceRecord, KnownDeviceStore } from "../storage/known-devices.ts";

/** The event kind of a first-seen device. */
export const NEW_DEVICE_EVENT = "login.new_device";

/** What the alert hook is told about a new device. */
export interface NewDeviceAlert {
  /** The user who logged in from the new device. */
  readonly userId: string;
  /** The realm of the login, or null when not known. */
  readonly realmId: string | null;
  /** The organization the login was for, or null. */
  readonly orgId: string | null;
  /** The device as just stored (its hash, description and first-seen time). */
  readonly device: KnownDeviceRecord;
  /** The client IP of the login, when known. */
  readonly ip: string | null;
  /** Where the login came from, when the risk gate located it. */
  readonly location: { readonly country: string } | null;
  /** The language of the login request (the alert mail's). */
  readonly locale: MailLocale | null;
}

/** The alert hook (the mail engineer's new-device mail). */
export type NewDeviceAlertHook = (alert: NewDeviceAlert) => void | Promise<void>;

/** What {@link KnownDevices} needs. */
export interface KnownDevicesOptions {
  /** Where the devices are kept, keyed by user and fingerprint hash. */
  readonly store: KnownDeviceStore;
  /** Receives `login.new_device` (an `EventPublisher` also writes it to the user's ledger). */
  readonly sink: EventSink;
  /** Stamps the `login.new_device` event's `occurredAt`. */
  readonly clock: Clock;
  /** Called after a first sighting. */
  readonly onNewDevice?: NewDeviceAlertHook | null;
  /** Told when the alert hook throws (default: ignored). */
  readonly onAlertError?: (error: unknown, alert: NewDeviceAlert) => void;
}

/** One completed login from a device. */
export interface DeviceSighting {
  /** The user who logged in. */
  readonly userId: string;
  /** The realm of the login; null or absent when not known. */
  readonly realmId?: string | null;
  /** The organization the login was for; null or absent when none. */
  readonly orgId?: string | null;
  /** The language of the login request. */
  readonly locale?: MailLocale | null;
  /** The fingerprint as the client sent it. */
  readonly fingerprint: string;
  /** A human description (user agent summary), shown in the device list. */
  readonly description?: string | null;
  /** The client IP of the login, when known (passed to the event and the alert). */
  readonly ip?: string | null;
  /** Where the login came from, when the risk gate located it. */
  readonly location?: { readonly country: string } | null;
}

/** Known-device tracking over the known-device store. */
export class KnownDevices {
  readonly #options: KnownDevicesOptions;

  /** Wires the tracking to its store, sink, clock and alert hook. */
  constructor(options: KnownDevicesOptions) {
    this.#options = options;
  }

  /** The stored key of a fingerprint: its SHA-256 hex. */
  static fingerprintHash(fingerprint: string): string {
    return sha256Hex(fingerprint);
  }

  /** Whether the fingerprint is a known device of the user (no write). */
  async isKnown(userId: string, fingerprint: string): Promise<boolean> {
    return (await this.#options.store.get(userId, KnownDevices.fingerprintHash(fingerprint))) !== null;
  }

  /**
   * Records a completed login from a device: inserts it (first sighting: emits
   * `login.new_device` and awaits the alert hook) or moves its last-seen time.
   */
  async recordLogin(sighting: DeviceSighting): Promise<{ device: KnownDeviceRecord; isNew: boolean }> {
    const hash = KnownDevices.fingerprintHash(sighting.fingerprint);
    const result = await this.#options.store.recordSeen(sighting.userId, hash, sighting.description ?? null);
    if (result.isNew) await this.announceNew(sighting, result.device);
    return result;
  }

  /**
   * What a first sighting does once the device is stored (by {@link recordLogin}, or by the
   * statement that recorded a sign-in): emits `login.new_device` and awaits the alert hook.
   */
  async announceNew(sighting: DeviceSighting, device: KnownDeviceRecord): Promise<void> {
    const hash = KnownDevices.fingerprintHash(sighting.fingerprint);
    const alert: NewDeviceAlert = {
      userId: sighting.userId,
      realmId: sighting.realmId ?? null,
      orgId: sighting.orgId ?? null,
      device,
      ip: sighting.ip ?? null,
      location: sighting.location ? { country: sighting.location.country } : null,
      locale: sighting.locale ?? null,
    };
    this.#options.sink.emit({
      kind: NEW_DEVICE_EVENT,
      occurredAt: this.#options.clock.now(),
      realmId: alert.realmId,
      orgId: alert.orgId,
      userId: alert.userId,
      data: {
        fingerprintHash: hash,
        description: device.description,
        ip: alert.ip,
        country: alert.location?.country ?? null,
      },
    });
    const hook = this.#options.onNewDevice;
    if (hook) {
      try {
        await hook(alert);
      } catch (error) {
        this.#options.onAlertError?.(error, alert);
      }
    }
  }

  /** The user's devices, most recently seen first. */
  list(userId: string): Promise<KnownDeviceRecord[]> {
    return this.#options.store.listByUser(userId);
  }

  /** Forgets one device (by its stored hash); returns whether it existed. */
  forget(userId: string, fingerprintHash: string): Promise<boolean> {
    return this.#options.store.delete(userId, fingerprintHash);
  }
}
