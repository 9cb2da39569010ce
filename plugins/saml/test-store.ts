/**
 * Test sign-ins in flight and their results (`saml_test_sign_ins`): a single-use ticket (stored
 * hashed) the admin API hands out, bound at the start to the sign-in's RelayState, completed by
 * the ACS with what it found (see `test-sign-in.ts`).
 *
 * @module
 */
import { type PluginContext, randomToken, randomUuid, sha256Hex } from "../../mod.ts";

/** How long a finished test's result is shown. */
export const TEST_RESULT_TTL_MS = 3600_000;
/** Bounds of what a test shows of the assertion's attributes. */
export const TEST_LIMITS = { attributes: 50, values: 10, chars: 256 } as const;

const TICKET = /^[A-Za-z0-9_-]{43}$/;

/** The plugin's table of test sign-ins. */
export const TEST_TABLES: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS saml_test_sign_ins (
    id uuid PRIMARY KEY,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    connection_id uuid NOT NULL,
    tester_id text NOT NULL,
    ticket_hash text UNIQUE,
    relay_hash text UNIQUE,
    return_to text NOT NULL,
    status text NOT NULL,
    result jsonb,
    created_at timestamptz NOT NULL,
    completed_at timestamptz,
    expires_at timestamptz NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS saml_test_sign_ins_tester ON saml_test_sign_ins (connection_id, tester_id, seq)",
];

/** Which svc user the assertion maps to. */
export type TestMapping =
  | {
    readonly outcome: "existing_user";
    readonly user: {
      readonly id: string;
      readonly email: string | null;
      readonly displayName: string | null;
    };
  }
  | {
    readonly outcome: "would_provision";
    readonly wouldProvision: {
      readonly email: string;
      readonly displayName: string | null;
      readonly attributes: Readonly<Record<string, unknown>>;
    };
  }
  | { readonly outcome: "refused"; readonly reason: string };

/** What a test sign-in found. */
export interface TestResult {
  /** The NameID, or null when the response was refused before it was read. */
  readonly nameId: string | null;
  readonly nameIdFormat: string | null;
  /** The received attributes, bounded by {@link TEST_LIMITS}. */
  readonly attributes: readonly { readonly name: string; readonly values: readonly string[] }[];
  /** Whether attributes, values or characters were left out. */
  readonly attributesTruncated: boolean;
  readonly mapping: TestMapping;
}

/** The assertion's attributes within {@link TEST_LIMITS}. */
export function boundedAttributes(
  attributes: Readonly<Record<string, readonly string[]>>,
): Pick<TestResult, "attributes" | "attributesTruncated"> {
  let truncated = false;
  const cut = (text: string) => {
    if (text.length <= TEST_LIMITS.chars) return text;
    truncated = true;
    return `${text.slice(0, TEST_LIMITS.chars)}…`;
  };
  const names = Object.keys(attributes);
  if (names.length > TEST_LIMITS.attributes) truncated = true;
  const out = names.slice(0, TEST_LIMITS.attributes).map((name) => {
    const values = attributes[name];
    if (values.length > TEST_LIMITS.values) truncated = true;
    return { name: cut(name), values: values.slice(0, TEST_LIMITS.values).map(cut) };
  });
  return { attributes: out, attributesTruncated: truncated };
}

interface Row {
  id: string;
  connection_id: string;
  status: string;
  result: TestResult | string | null;
  created_at: Date | string;
  completed_at: Date | string | null;
}

/** Test sign-ins in `saml_test_sign_ins`. */
export class TestSignInStore {
  readonly #s: { readonly ctx: PluginContext<{ readonly requestTtlSeconds: number }> };

  constructor(ctx: PluginContext<{ readonly requestTtlSeconds: number }>) {
    this.#s = { ctx };
  }

  /** A new test of `connectionId` by `testerId`: its id and single-use ticket. */
  async create(
    connectionId: string,
    testerId: string,
    returnTo: string,
  ): Promise<{ id: string; ticket: string; expiresAt: Date }> {
    const { ctx } = this.#s;
    const now = ctx.clock.now();
    const id = randomUuid(ctx.random);
    const ticket = randomToken(ctx.random, 32);
    const expiresAt = new Date(now + ctx.config.requestTtlSeconds * 1000);
    await ctx.sql.query("DELETE FROM saml_test_sign_ins WHERE expires_at <= $1", [new Date(now)]);
    await ctx.sql.query(
      `INSERT INTO saml_test_sign_ins (id, connection_id, tester_id, ticket_hash, return_to, status, created_at,
         expires_at) VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7)`,
      [id, connectionId, testerId, sha256Hex(ticket), returnTo, new Date(now), expiresAt],
    );
    return { id, ticket, expiresAt };
  }

  /** Uses a ticket once (for `connectionId`): the test's id and `returnTo`, or null. */
  async claim(ticket: string, connectionId: string): Promise<{ id: string; returnTo: string } | null> {
    if (!TICKET.test(ticket)) return null;
    const [row] = await this.#s.ctx.sql.query<{ id: string; return_to: string }>(
      `UPDATE saml_test_sign_ins SET ticket_hash = NULL, status = 'started'
       WHERE ticket_hash = $1 AND connection_id = $2 AND status = 'pending' AND expires_at > $3
       RETURNING id, return_to`,
      [sha256Hex(ticket), connectionId, new Date(this.#s.ctx.clock.now())],
    );
    return row === undefined ? null : { id: row.id, returnTo: row.return_to };
  }

  /** Binds a started test to its sign-in's RelayState. */
  async bind(id: string, relayState: string): Promise<void> {
    await this.#s.ctx.sql.query("UPDATE saml_test_sign_ins SET relay_hash = $2 WHERE id = $1", [
      id,
      sha256Hex(relayState),
    ]);
  }

  /** The started test a RelayState belongs to (of `connectionId`), or null: the post is a sign-in. */
  async forRelay(relayState: string, connectionId: string): Promise<{ id: string; returnTo: string } | null> {
    const [row] = await this.#s.ctx.sql.query<{ id: string; return_to: string }>(
      `SELECT id, return_to FROM saml_test_sign_ins
       WHERE relay_hash = $1 AND connection_id = $2 AND status = 'started'`,
      [sha256Hex(relayState), connectionId],
    );
    return row === undefined ? null : { id: row.id, returnTo: row.return_to };
  }

  /** Stores a test's result (once). */
  async complete(id: string, result: TestResult): Promise<void> {
    const now = this.#s.ctx.clock.now();
    await this.#s.ctx.sql.query(
      `UPDATE saml_test_sign_ins SET status = 'done', result = $2::jsonb, relay_hash = NULL, completed_at = $3,
         expires_at = $4 WHERE id = $1 AND status = 'started'`,
      [id, JSON.stringify(result), new Date(now), new Date(now + TEST_RESULT_TTL_MS)],
    );
  }

  /** The newest live test of `connectionId` by `testerId`, or null. */
  async latest(connectionId: string, testerId: string) {
    const [row] = await this.#s.ctx.sql.query<Row>(
      `SELECT id, connection_id, status, result, created_at, completed_at FROM saml_test_sign_ins
       WHERE connection_id = $1 AND tester_id = $2 AND expires_at > $3 ORDER BY seq DESC LIMIT 1`,
      [connectionId, testerId, new Date(this.#s.ctx.clock.now())],
    );
    if (row === undefined) return null;
    return {
      id: row.id,
      connectionId: row.connection_id,
      status: row.status as "pending" | "started" | "done",
      createdAt: new Date(row.created_at).toISOString(),
      completedAt: row.completed_at === null ? null : new Date(row.completed_at).toISOString(),
      result: typeof row.result === "string" ? JSON.parse(row.result) as TestResult : row.result,
    };
  }
}
