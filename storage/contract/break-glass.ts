/**
 * Break-glass state per realm (spec 2.9, section 3): when the last drill was
 * recorded and when a break-glass login last happened.
 */

/** Break-glass state of a realm. */
export interface BreakGlassState {
  readonly realmId: string;
  readonly lastDrillAt: Date | null;
  readonly lastUseAt: Date | null;
}

/** Where break-glass state lives. */
export interface BreakGlassStore {
  /** Sets LastDrillAt to the clock's now (creating the row if needed); returns the new state. */
  recordDrill(realmId: string): Promise<BreakGlassState>;
  /** Sets LastUseAt to the clock's now (creating the row if needed); returns the new state. */
  recordUse(realmId: string): Promise<BreakGlassState>;
  /** The realm's state, or null when nothing was ever recorded. */
  get(realmId: string): Promise<BreakGlassState | null>;
}
