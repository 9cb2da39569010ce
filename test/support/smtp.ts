/**
 * A real SMTP server for tests (the `smtp-server` package, which nobody here wrote), on loopback:
 * it records every message it accepts, parsed by `mailparser`. It can require authentication,
 * speak implicit TLS or offer STARTTLS (with the package's self-signed certificate), and be
 * stopped and started again on the same port to play an SMTP server that goes down.
 */
import { SMTPServer } from "smtp-server";
import { simpleParser } from "mailparser";

/** A message the server accepted. */
export interface ReceivedMail {
  readonly from: string;
  readonly to: string[];
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  readonly messageId: string;
  readonly headers: Map<string, unknown>;
  /** The raw MIME source. */
  readonly raw: string;
  /** Whether the session was encrypted (implicit TLS or STARTTLS). */
  readonly secure: boolean;
  /** The authenticated user, if any. */
  readonly user: string | null;
}

/** What the test server is started with. */
export interface TestSmtpOptions {
  /** Port to listen on (default 0: a free one). */
  readonly port?: number;
  /** Implicit TLS. */
  readonly secure?: boolean;
  /** Offer STARTTLS (default false: plain only). */
  readonly starttls?: boolean;
  /** Require this user and password. */
  readonly auth?: { readonly user: string; readonly password: string };
}

/** A running test SMTP server. */
export interface TestSmtpServer {
  readonly port: number;
  /** Every accepted message, in order (kept across stop and start). */
  readonly received: ReceivedMail[];
  /** Resolves with the first accepted message (from now on or already received) matching `match`. */
  waitFor(match: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  /** Stops listening (connections are refused until `start`). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
}

/** Starts a test SMTP server on 127.0.0.1. */
export async function startTestSmtp(options: TestSmtpOptions = {}): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const waiters: { match: (m: ReceivedMail) => boolean; resolve: (m: ReceivedMail) => void }[] = [];
  let port = options.port ?? 0;
  let server: any = null;

  const make = () =>
    new SMTPServer({
      secure: options.secure ?? false,
      disabledCommands: [
        ...(options.starttls || options.secure ? [] : ["STARTTLS"]),
        ...(options.auth ? [] : ["AUTH"]),
      ],
      authOptional: options.auth === undefined,
      allowInsecureAuth: false,
      logger: false,
      onAuth(auth: any, _session: any, callback: (err: Error | null, res?: any) => void) {
        const want = options.auth;
        if (want && auth.username === want.user && auth.password === want.password) {
          callback(null, { user: auth.username });
        } else callback(new Error("Invalid username or password"));
      },
      onData(stream: any, session: any, callback: (err?: Error | null) => void) {
        const chunks: Uint8Array[] = [];
        stream.on("data", (c: Uint8Array) => chunks.push(c));
        stream.on("end", async () => {
          const raw = new TextDecoder().decode(concat(chunks));
          try {
            const parsed = await simpleParser(raw);
            const mail: ReceivedMail = {
              from: parsed.from?.text ?? "",
              to: session.envelope.rcptTo.map((r: { address: string }) => r.address),
              subject: parsed.subject ?? "",
              text: parsed.text ?? "",
              html: typeof parsed.html === "string" ? parsed.html : "",
              messageId: parsed.messageId ?? "",
              headers: parsed.headers as Map<string, unknown>,
              raw,
              secure: Boolean(session.secure),
              user: session.user ?? null,
            };
            received.push(mail);
            for (const w of [...waiters]) {
              if (w.match(mail)) {
                waiters.splice(waiters.indexOf(w), 1);
                w.resolve(mail);
              }
            }
            callback(null);
          } catch (err) {
            callback(err as Error);
          }
        });
      },
    });

  const start = () =>
    new Promise<void>((resolve, reject) => {
      server = make();
      server.on("error", () => {});
      server.server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        port = server.server.address().port;
        resolve();
      });
    });
  await start();

  return {
    get port() {
      return port;
    },
    received,
    waitFor(match, timeoutMs = 20_000) {
      const already = received.find(match);
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no matching mail arrived")), timeoutMs);
        waiters.push({
          match,
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          },
        });
      });
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (server === null) return resolve();
        const s = server;
        server = null;
        s.close(() => resolve());
      }),
    start,
  };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
