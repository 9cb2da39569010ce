/**
 * Times for people in the console: how long ago (or from now) an instant is.
 *
 * @module
 */

const RELATIVE_UNITS: readonly [Intl.RelativeTimeFormatUnit, number][] = [
  ["second", 60],
  ["minute", 60],
  ["hour", 24],
  ["day", 7],
];

/**
 * How long ago (or from now) an instant is, in the browser's language unless `locale` is given
 * ("2 minutes ago", "in 5 minutes"); null past a week, where the date says more.
 */
export function relativeTime(at: Date, now = Date.now(), locale?: string): string | null {
  let amount = (at.getTime() - now) / 1000;
  if (!Number.isFinite(amount)) return null;
  const format = new Intl.RelativeTimeFormat(locale, { numeric: "auto" });
  for (const [unit, size] of RELATIVE_UNITS) {
    const rounded = Math.round(amount);
    if (Math.abs(rounded) < size) return format.format(rounded, unit);
    amount /= size;
  }
  return null;
}
