/**
 * This instance's presence on a shared Postgres database (issue 27): `svc start` registers its
 * issuer and beats every {@link HEARTBEAT_MS}; an instance that has not beaten for
 * {@link LIVE_WINDOW_MS} counts as gone. At start, another live instance serving a different
 * issuer (`SVC_BASE_URL`) is warned about: tokens one issues carry an `iss` the other refuses.
 *
 * @module
 */
import type { Clock } from "../core/clock.ts";
import type { RandomSource } from "../core/random.ts";
import { randomUuid } from "../core/random.ts";
import type { InstanceStore, LiveInstance } from "../storage/sql/instances.ts";

/** How often an instance beats. */
export const HEARTBEAT_MS = 30_000;
/** How long after its last beat an instance still counts as live. */
export const LIVE_WINDOW_MS = 3 * HEARTBEAT_MS;

/** The warning line about live instances with another issuer, or null when none differ. */
export function issuerMismatchLine(issuer: string, others: readonly LiveInstance[]): string | null {
  const differing = others.filter((other) => other.issuer !== issuer);
  if (differing.length === 0) return null;
  const named = differing.slice(0, 3).map((o) => `${o.issuer} (pid ${o.pid} on ${o.hostname})`).join(", ");
  return `instances: warning: this instance's issuer ${issuer} differs from ${differing.length} live instance(s) ` +
    `on this database: ${named}; each refuses the other's tokens. Give every instance the same SVC_BASE_URL ` +
    `(the public URL clients use), or give each its own database.`;
}

/** A running instance's registration and heartbeat. */
export class InstancePresence {
  readonly id: string;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly deps: {
      store: InstanceStore;
      clock: Clock;
      random: RandomSource;
      issuer: string;
      hostname: string;
      pid: number;
      onError(line: string): void;
    },
  ) {
    this.id = randomUuid(deps.random);
  }

  /** Registers, starts beating, and answers the warning line (or null). */
  async start(): Promise<string | null> {
    const { store, clock, issuer, hostname, pid } = this.deps;
    const now = new Date(clock.now());
    const since = new Date(now.getTime() - LIVE_WINDOW_MS);
    await store.register({ id: this.id, issuer, hostname, pid }, now, since);
    const others = await store.others(this.id, since);
    this.#timer = setInterval(() => void this.beat(), HEARTBEAT_MS);
    return issuerMismatchLine(issuer, others);
  }

  /** One heartbeat (re-registers after a row was dropped as stale). */
  async beat(): Promise<void> {
    const { store, clock, issuer, hostname, pid } = this.deps;
    try {
      const now = new Date(clock.now());
      if (!await store.beat(this.id, now)) {
        await store.register(
          { id: this.id, issuer, hostname, pid },
          now,
          new Date(now.getTime() - LIVE_WINDOW_MS),
        );
      }
    } catch (err) {
      this.deps.onError(
        `instances: heartbeat failed: ${err instanceof Error ? err.message.split("\n")[0] : err}`,
      );
    }
  }

  /** Stops beating and removes the registration. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.deps.store.remove(this.id);
  }
}
