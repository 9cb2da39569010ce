/**
 * Break-glass state per realm (spec 2.9, section 3): when the last drill was
 * recorded and when a break-glass login last happened.
 */

/** Break-glass state of a realm. */
export interface BreakGlassState {
  /** The realm it belongs to. */
  readonly realmId: string;
  /** When a drill was last recorded, or null. */
  readonly lastDrillAt: Date | null;
  /** When a break-glass login last happened, or null. */
  readonly lastUseAt: Date | null;
  /** Set by a break-glass login, cleared by a rotation of the account's password. */
  readonly rotationRequired: boolean;
  /** When the account's password was last rotated, or null. */
  readonly lastRotatedAt: Date | null;
  /** When `breakglass.rotation_required` was last emitted (readiness reminders, at most hourly). */
  readonly rotationRemindedAt: Date | null;
}

/** A realm's break-glass account. */
export interface BreakGlassAccount {
  /** The realm it belongs to. */
  readonly realmId: string;
  /** The user it concerns. */
  readonly userId: string;
  /** The account's email address. */
  readonly email: string;
  /** When it was created. */
  readonly createdAt: Date;
}

/** Where break-glass state lives. */
export interface BreakGlassStore {
  /** Sets LastDrillAt to the clock's now (creating the row if needed); returns the new state. */
  recordDrill(realmId: string): Promise<BreakGlassState>;
  /** Sets LastUseAt to the clock's now (creating the row if needed); returns the new state. */
  recordUse(realmId: string): Promise<BreakGlassState>;
  /** The realm's state, or null when nothing was ever recorded. */
  get(realmId: string): Promise<BreakGlassState | null>;
  /**
   * Records a break-glass login: LastUseAt = now, rotation required, reminded now (the login
   * emits the first `breakglass.rotation_required` itself). Returns the new state.
   */
  recordLogin(realmId: string): Promise<BreakGlassState>;
  /** Records a rotation of the account's password: rotation no longer required. Returns the new state. */
  recordRotation(realmId: string): Promise<BreakGlassState>;
  /**
   * Claims the next rotation reminder of a realm: succeeds (returns the state) only when rotation
   * is required and no reminder was claimed within `intervalMs` before now; one statement, so
   * instances sharing the database remind at most once per interval between them.
   */
  claimRotationReminder(realmId: string, intervalMs: number): Promise<BreakGlassState | null>;
  /** The realm's break-glass account (the user with `isBreakGlass`), or null. */
  account(realmId: string): Promise<BreakGlassAccount | null>;
  /** Every realm's break-glass account with the realm's state (null when nothing was recorded). */
  listAccounts(): Promise<{ account: BreakGlassAccount; state: BreakGlassState | null }[]>;
}
