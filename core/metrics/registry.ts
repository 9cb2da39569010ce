/**
 * A small metrics registry that renders the Prometheus text exposition format (0.0.4): counters
 * and histograms with labels, recorded as things happen, and gauges read at scrape time from a
 * collector (queue depths, cache sizes). No I/O of its own: the HTTP layer serves {@link
 * MetricsRegistry.render}'s text.
 *
 * The series of one counter or histogram are capped ({@link DEFAULT_MAX_SERIES}): once a metric
 * holds that many, a new combination of label values is recorded in one overflow series whose
 * every label is `other`, so no label value that slips through from input can grow a scrape
 * without bound. Callers still keep their labels bounded; the cap is the backstop.
 *
 * @example
 * ```ts
 * const registry = new MetricsRegistry();
 * const requests = registry.counter("svc_http_requests_total", "HTTP requests.", ["status"]);
 * requests.inc({ status: "200" });
 * await registry.render(); // "# HELP svc_http_requests_total HTTP requests.\n# TYPE …"
 * ```
 *
 * @module
 */

/** Label values by label name. */
export type Labels = Readonly<Record<string, string>>;

/** One gauge sample a collector reports. */
export interface GaugeSample {
  /** The sample's labels (none: the metric's only series). */
  readonly labels?: Labels;
  /** The sample's value. */
  readonly value: number;
}

/** A counter: only goes up. */
export interface Counter {
  /** Adds `by` (default 1) to the series of `labels`. */
  inc(labels?: Labels, by?: number): void;
  /** The current value for `labels` (0 when never incremented). */
  value(labels?: Labels): number;
}

/** A histogram of observed values (seconds, for latencies) over fixed buckets. */
export interface Histogram {
  /** Records one observation in the series of `labels`. */
  observe(labels: Labels, value: number): void;
  /** How many observations were made for `labels`. */
  count(labels?: Labels): number;
}

/** Default latency buckets in seconds: 5 ms to 10 s. */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
];

/** The most series one counter or histogram holds before new label combinations overflow into `other`. */
export const DEFAULT_MAX_SERIES = 10_000;

/** Options of a {@link MetricsRegistry}. */
export interface MetricsRegistryOptions {
  /** The most series of one counter or histogram (default {@link DEFAULT_MAX_SERIES}). */
  readonly maxSeries?: number;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

interface Family {
  readonly name: string;
  readonly help: string;
  render(): Promise<string[]>;
}

/** Holds every metric of a process and renders them for a scrape. */
export class MetricsRegistry {
  readonly #families: Family[] = [];
  readonly #maxSeries: number;

  /** A registry; `options.maxSeries` caps the series of each counter and histogram. */
  constructor(options: MetricsRegistryOptions = {}) {
    this.#maxSeries = Math.max(1, options.maxSeries ?? DEFAULT_MAX_SERIES);
  }

  /** Registers a counter; `labelNames` are the labels every increment carries. */
  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    checkNames(name, labelNames);
    const values = new Map<string, { labels: Labels; value: number }>();
    const cap = this.#maxSeries;
    this.#add({
      name,
      help,
      render: () =>
        Promise.resolve([
          `# TYPE ${name} counter`,
          ...[...values.values()].map((v) => `${name}${formatLabels(v.labels)} ${formatValue(v.value)}`),
        ]),
    });
    return {
      inc(labels = {}, by = 1) {
        if (!(by >= 0)) throw new RangeError("a counter only goes up");
        const [key, kept] = seriesOf(values, cap, labelNames, labels);
        const entry = values.get(key) ?? { labels: pick(labelNames, kept), value: 0 };
        entry.value += by;
        values.set(key, entry);
      },
      value: (labels = {}) => values.get(labelKey(labelNames, labels))?.value ?? 0,
    };
  }

  /** Registers a histogram with ascending `buckets` (the `+Inf` bucket is implied). */
  histogram(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[] = LATENCY_BUCKETS_SECONDS,
  ): Histogram {
    checkNames(name, labelNames);
    if (buckets.some((b, i) => i > 0 && b <= buckets[i - 1])) throw new RangeError("buckets must ascend");
    const series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
    const cap = this.#maxSeries;
    this.#add({
      name,
      help,
      render: () =>
        Promise.resolve([
          `# TYPE ${name} histogram`,
          ...[...series.values()].flatMap((s) => {
            const lines: string[] = [];
            let cumulative = 0;
            buckets.forEach((bound, i) => {
              cumulative += s.counts[i];
              lines.push(
                `${name}_bucket${formatLabels({ ...s.labels, le: formatValue(bound) })} ${cumulative}`,
              );
            });
            lines.push(`${name}_bucket${formatLabels({ ...s.labels, le: "+Inf" })} ${s.count}`);
            lines.push(`${name}_sum${formatLabels(s.labels)} ${formatValue(s.sum)}`);
            lines.push(`${name}_count${formatLabels(s.labels)} ${s.count}`);
            return lines;
          }),
        ]),
    });
    return {
      observe(labels, value) {
        const [key, kept] = seriesOf(series, cap, labelNames, labels);
        const entry = series.get(key) ??
          { labels: pick(labelNames, kept), counts: buckets.map(() => 0), sum: 0, count: 0 };
        const index = buckets.findIndex((bound) => value <= bound);
        if (index >= 0) entry.counts[index]++;
        entry.sum += value;
        entry.count++;
        series.set(key, entry);
      },
      count: (labels = {}) => series.get(labelKey(labelNames, labels))?.count ?? 0,
    };
  }

  /**
   * Registers a gauge whose samples `collect` reads at each scrape (a failing collector is left out
   * of that scrape). `type: "counter"` for a monotonic total kept elsewhere (a cache's hit count).
   */
  gauge(
    name: string,
    help: string,
    collect: () => GaugeSample[] | Promise<GaugeSample[]>,
    type: "gauge" | "counter" = "gauge",
  ): void {
    checkNames(name, []);
    this.#add({
      name,
      help,
      async render() {
        let samples: GaugeSample[];
        try {
          samples = await collect();
        } catch {
          return [];
        }
        return [
          `# TYPE ${name} ${type}`,
          ...samples.map((s) => `${name}${formatLabels(s.labels ?? {})} ${formatValue(s.value)}`),
        ];
      },
    });
  }

  /** The exposition text of every metric, in registration order. */
  async render(): Promise<string> {
    const blocks = await Promise.all(this.#families.map(async (family) => {
      const lines = await family.render();
      return lines.length === 0 ? [] : [`# HELP ${family.name} ${escapeHelp(family.help)}`, ...lines];
    }));
    return blocks.flat().join("\n") + "\n";
  }

  #add(family: Family): void {
    if (this.#families.some((f) => f.name === family.name)) {
      throw new RangeError(`metric ${family.name} is registered twice`);
    }
    this.#families.push(family);
  }
}

function checkNames(name: string, labelNames: readonly string[]): void {
  if (!METRIC_NAME.test(name)) throw new RangeError(`invalid metric name: ${name}`);
  for (const label of labelNames) {
    if (!LABEL_NAME.test(label) || label === "le") throw new RangeError(`invalid label name: ${label}`);
  }
}

/** The overflow value of every label once a metric holds its most series. */
const OVERFLOW_LABEL = "other";

/**
 * The key and labels a sample is recorded under: its own, or (when `series` is full and does not
 * hold them yet) the overflow series, every label `other`.
 */
function seriesOf(
  series: ReadonlyMap<string, unknown>,
  cap: number,
  labelNames: readonly string[],
  labels: Labels,
): [string, Labels] {
  const key = labelKey(labelNames, labels);
  if (series.size < cap || series.has(key)) return [key, labels];
  const overflow = Object.fromEntries(labelNames.map((n) => [n, OVERFLOW_LABEL]));
  return [labelKey(labelNames, overflow), overflow];
}

function pick(labelNames: readonly string[], labels: Labels): Labels {
  return Object.fromEntries(labelNames.map((n) => [n, labels[n] ?? ""]));
}

function labelKey(labelNames: readonly string[], labels: Labels): string {
  return JSON.stringify(labelNames.map((n) => labels[n] ?? ""));
}

function formatLabels(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return "";
  return `{${entries.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(",")}}`;
}

function escapeLabelValue(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll('"', '\\"');
}

function escapeHelp(help: string): string {
  return help.replaceAll("\\", "\\\\").replaceAll("\n", "\\n");
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}
