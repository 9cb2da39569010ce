/**
 * The background loop of a queue worker (webhook dispatch, mail delivery): run a batch; when it
 * came back full, or work was announced meanwhile (`wake()`), run the next at once; otherwise wait
 * `pollIntervalMs` of real time or until woken. A failed batch is reported and the loop goes on.
 *
 * @module
 */

/** What the loop runs, and how. */
export interface PollingLoopOptions<T> {
  /** Claims and processes one batch; answers its outcomes. */
  readonly runOnce: () => Promise<readonly T[]>;
  /** A batch of this many outcomes was full: run the next without waiting. */
  readonly batchSize: number;
  /** Pause between polls when nothing is due, in real milliseconds. */
  readonly pollIntervalMs: number;
  /** A batch failed (the loop goes on). */
  readonly onError: (error: unknown) => void;
}

/** A worker's polling loop: `start()`, `wake()`, `stop()`, and `drain()` for tests and commands. */
export class PollingLoop<T> {
  readonly #o: PollingLoopOptions<T>;
  #loop: Promise<void> | null = null;
  #stopped = true;
  #wake: (() => void) | null = null;
  #pending = false;

  /** A stopped loop over `options` (call `start()` to poll, or `drain()` to run batches now). */
  constructor(options: PollingLoopOptions<T>) {
    this.#o = options;
  }

  /** Runs batches until one is empty (or `maxBatches`); returns every outcome. */
  async drain(maxBatches = 1000): Promise<T[]> {
    const all: T[] = [];
    for (let i = 0; i < maxBatches; i++) {
      const batch = await this.#o.runOnce();
      all.push(...batch);
      if (batch.length === 0) break;
    }
    return all;
  }

  /** Starts polling in the background (idempotent). */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#loop = this.#run();
  }

  /** Asks a running loop to poll now (work was queued). */
  wake(): void {
    this.#pending = true;
    this.#wake?.();
  }

  /** Stops polling; resolves once the batch in progress has finished. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    try {
      await this.#loop;
    } finally {
      this.#loop = null;
    }
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      let full = false;
      this.#pending = false;
      try {
        full = (await this.#o.runOnce()).length >= this.#o.batchSize;
      } catch (error) {
        this.#o.onError(error);
      }
      if (full || this.#pending || this.#stopped) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.#o.pollIntervalMs);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.#wake = done;
      });
      this.#wake = null;
    }
  }
}
