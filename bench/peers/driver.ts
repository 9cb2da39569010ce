/**
 * The one load driver of bench/peers/run.ts: a fixed number of clients, each sending its next
 * request as soon as the previous one is answered, for a fixed duration. Requests go through
 * `fetch`, whose connection pool keeps connections alive, so after the first request of each
 * client no round pays a TCP handshake; every answer's body is read (or cancelled) before the
 * next request.
 *
 * A round's rate is the completed requests divided by the time from its start to the last
 * answer, the requests still in flight at the deadline included: a slow request (a sign-in)
 * therefore counts, and a round never reports work it did not finish.
 *
 * @module
 */

/** One request of one client: throws when the answer is not the expected one. */
export type Request = (client: number) => Promise<void>;

/** What one round measured. */
export interface RoundResult {
  /** Requests answered. */
  requests: number;
  /** From the round's start to the last answer. */
  seconds: number;
  /** `requests / seconds`. */
  rate: number;
}

/** Runs `clients` concurrent loops of `request` for `seconds`, then waits for the requests in flight. */
export async function drive(request: Request, clients: number, seconds: number): Promise<RoundResult> {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let requests = 0;
  await Promise.all(Array.from({ length: clients }, async (_, client) => {
    while (performance.now() < deadline) {
      await request(client);
      requests++;
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  return { requests, seconds: elapsed, rate: requests / elapsed };
}

/** The median of `values` (the lower middle one for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** A contender of one workload: a name and its request. */
export interface Side {
  name: string;
  request: Request;
}

/** The rounds of one workload, per side, in the order they ran. */
export interface Interleaved {
  /** Rates per round, per side name. */
  rates: Record<string, number[]>;
  /** Median rate per side name. */
  medians: Record<string, number>;
}

/**
 * Measures two sides in alternating rounds (`a b`, `b a`, `a b`…) after one short warm-up
 * round each (JIT, prepared statements, pools), so that a change of machine load during the run
 * falls on both sides alike; answers every round's rate and the medians.
 */
export async function interleave(
  a: Side,
  b: Side,
  options: { clients: number; seconds: number; rounds: number; warmupSeconds: number },
): Promise<Interleaved> {
  const { clients, seconds, rounds, warmupSeconds } = options;
  await drive(a.request, clients, warmupSeconds);
  await drive(b.request, clients, warmupSeconds);
  const rates: Record<string, number[]> = { [a.name]: [], [b.name]: [] };
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? [a, b] : [b, a]) {
      rates[side.name].push((await drive(side.request, clients, seconds)).rate);
    }
  }
  return {
    rates,
    medians: { [a.name]: median(rates[a.name]), [b.name]: median(rates[b.name]) },
  };
}

/** Throws unless `res` has `status`, with its body in the message; otherwise answers its JSON body. */
export async function expectJson(res: Response, status: number, what: string): Promise<any> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`${what}: HTTP ${res.status}: ${text.slice(0, 300)}`);
  return text === "" ? null : JSON.parse(text);
}
