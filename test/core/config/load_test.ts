import assert from "node:assert/strict";
import * as v from "valibot";
import {
  ConfigError,
  describeDefaults,
  ENV_SETTINGS,
  FILE_ONLY_SETTINGS,
  loadConfig,
  settingDefault,
  type SvcConfig,
  SvcConfigSchema,
  withListenPort,
} from "../../../core/config/mod.ts";
import { SvcError } from "../../../core/errors.ts";

type Env = Record<string, string | undefined>;

function get(config: SvcConfig, path: string): unknown {
  let node: unknown = config;
  for (const key of path.split(".")) node = (node as Record<string, unknown>)[key];
  return node;
}

/** The message of the ConfigError loadConfig throws. */
function failure(env: Env, fileText?: string): string {
  try {
    loadConfig({ env, fileText });
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${err}`);
    assert.ok(err instanceof SvcError);
    assert.equal(err.code, "config_invalid");
    assert.ok(!err.message.includes("\n"), `one line: ${err.message}`);
    assert.ok(err.message.startsWith("config: "), err.message);
    return err.message;
  }
  assert.fail(`expected ${JSON.stringify(env)} to be rejected`);
}

Deno.test("config: with nothing set, development defaults for localhost and the spec's limits", () => {
  const { config, defaultsUsed } = loadConfig({ env: {} });
  assert.deepEqual(config.server, {
    host: "127.0.0.1",
    port: 8080,
    baseUrl: "http://localhost:8080",
    pathBase: "",
    trustedProxies: [],
    maxBodyBytes: 65_536,
    maxUploadBytes: 10_485_760,
    maxJsonDepth: 160,
    maxJsonMembers: 1000,
    corsOrigins: [],
  });
  assert.deepEqual(config.storage, { kind: "embedded", dataDir: ".svc-data" });
  assert.deepEqual(config.relyingParty, {
    id: "localhost",
    name: "svc (development)",
    origins: ["http://localhost:8080"],
  });
  assert.deepEqual(defaultsUsed, [
    "SVC_HOST",
    "SVC_PORT",
    "SVC_BASE_URL",
    "SVC_DATA_DIR",
    "SVC_RP_ID",
    "SVC_RP_NAME",
    "SVC_RP_ORIGINS",
  ]);
  assert.equal(
    describeDefaults({ config, defaultsUsed }),
    'SVC_HOST=127.0.0.1, SVC_PORT=8080, SVC_BASE_URL=http://localhost:8080, SVC_DATA_DIR=.svc-data, SVC_RP_ID=localhost, SVC_RP_NAME="svc (development)", SVC_RP_ORIGINS=http://localhost:8080',
  );
  // Spec section 8.
  assert.deepEqual(config.tokens, {
    accessTokenTtlSeconds: 600,
    refreshTokenTtlSeconds: 2_592_000,
    mfaTokenTtlSeconds: 300,
    signingKeyOverlapSeconds: 86_400,
    refreshGraceSeconds: 0,
    nativeRsaSigner: true,
  });
  assert.deepEqual(config.sessions, { idleTimeoutSeconds: 604_800, absoluteTimeoutSeconds: 2_592_000 });
  assert.deepEqual(config.cookies, { secure: "auto", sameSite: "Lax" });
  assert.deepEqual(config.passkey, { ceremonyTtlSeconds: 300 });
  assert.deepEqual(config.totp, { digits: 6, stepSeconds: 30, driftSteps: 1 });
  assert.equal(config.password.argon2MemoryKiB, 64 * 1024);
  assert.equal(config.password.argon2Iterations, 3);
  assert.deepEqual(config.abuse, {
    perIp: { limit: 30, windowSeconds: 300, failMode: "open" },
    perIpAccount: { limit: 10, windowSeconds: 900, failMode: "open" },
    accountLockout: { limit: 5, windowSeconds: 900, failMode: "open" },
    credentialStuffing: { distinctIdentifiers: 200, windowSeconds: 600, failMode: "open" },
    captcha: { provider: "none", atPercent: 50, hostnames: [], minScorePercent: 50, timeoutMs: 5000 },
  });
  assert.deepEqual(config.risk, {
    weights: { newDevice: 30, impossibleTravel: 40, ipReputation: 50, velocity: 25 },
    stepUpAt: 40,
    blockAt: 80,
    impossibleTravelKmh: 1000,
    impossibleTravelMinKm: 500,
    velocityLogins: 10,
    velocityWindowSeconds: 3600,
    ipReputationThreshold: 50,
  });
  assert.deepEqual(config.webhooks.retryScheduleSeconds, [60, 300, 1800, 7200, 43200]);
  assert.equal(config.webhooks.disableAfterConsecutiveFailures, 10);
  assert.equal(config.webhooks.mountPath, "/svc-admin/webhooks");
  assert.deepEqual(config.bootstrap, {});
});

Deno.test("config: each environment variable sets its field", async (t) => {
  const cases: { env: Env; path: string; expected: unknown }[] = [
    { env: { SVC_PORT: "9000" }, path: "server.port", expected: 9000 },
    { env: { SVC_PORT: "0" }, path: "server.port", expected: 0 },
    { env: { SVC_HOST: "0.0.0.0" }, path: "server.host", expected: "0.0.0.0" },
    { env: { SVC_HOST: "::" }, path: "server.host", expected: "::" },
    { env: { SVC_PATH_BASE: "/auth/" }, path: "server.pathBase", expected: "/auth" },
    {
      env: { SVC_DATA_DIR: "/var/lib/svc" },
      path: "storage",
      expected: { kind: "embedded", dataDir: "/var/lib/svc" },
    },
    {
      env: { SVC_DATABASE_URL: "postgres://svc:pw@db:5432/svc" },
      path: "storage",
      expected: { kind: "postgres", url: "postgres://svc:pw@db:5432/svc" },
    },
    {
      env: {
        SVC_BASE_URL: "https://id.example.com/",
        SVC_RP_ID: "example.com",
        SVC_RP_NAME: "Example",
        SVC_RP_ORIGINS: "https://id.example.com",
      },
      path: "server.baseUrl",
      expected: "https://id.example.com",
    },
    { env: { SVC_RP_ID: "Example.COM" }, path: "relyingParty.id", expected: "example.com" },
    { env: { SVC_RP_NAME: "Example Inc." }, path: "relyingParty.name", expected: "Example Inc." },
    {
      env: { SVC_RP_ORIGINS: "https://example.com, https://app.example.com:8443/ ,http://localhost:5173" },
      path: "relyingParty.origins",
      expected: ["https://example.com", "https://app.example.com:8443", "http://localhost:5173"],
    },
    { env: { SVC_ACCESS_TOKEN_TTL_SECONDS: "300" }, path: "tokens.accessTokenTtlSeconds", expected: 300 },
    {
      env: { SVC_REFRESH_TOKEN_TTL_SECONDS: "86400" },
      path: "tokens.refreshTokenTtlSeconds",
      expected: 86400,
    },
    { env: { SVC_TOTP_DRIFT_STEPS: "0" }, path: "totp.driftSteps", expected: 0 },
    { env: { SVC_ABUSE_PER_IP_FAIL_MODE: "closed" }, path: "abuse.perIp.failMode", expected: "closed" },
    { env: { SVC_ABUSE_ACCOUNT_LOCKOUT_LIMIT: "3" }, path: "abuse.accountLockout.limit", expected: 3 },
    {
      env: { SVC_WEBHOOK_RETRY_SCHEDULE_SECONDS: "10, 20" },
      path: "webhooks.retryScheduleSeconds",
      expected: [10, 20],
    },
    { env: { SVC_RISK_BLOCK_AT: "100" }, path: "risk.blockAt", expected: 100 },
    {
      env: { SVC_AUTHZ_SNAPSHOT_CACHE_MAX_ENTRIES: "0" },
      path: "authz.snapshotCacheMaxEntries",
      expected: 0,
    },
    {
      env: { SVC_BOOTSTRAP_ADMIN_EMAIL: "admin@example.com", SVC_BOOTSTRAP_ADMIN_PASSWORD: "correct horse" },
      path: "bootstrap",
      expected: { adminEmail: "admin@example.com", adminPassword: "correct horse" },
    },
    // Empty means unset; reserved variables of other modules are accepted.
    { env: { SVC_PORT: "" }, path: "server.port", expected: 8080 },
    {
      env: { SVC_TEST_DATABASE_URL: "postgres://x", SVC_CONFIG_FILE: "" },
      path: "server.port",
      expected: 8080,
    },
  ];
  for (const { env, path, expected } of cases) {
    await t.step(`${Object.keys(env).join(" ")} → ${path}`, () => {
      assert.deepEqual(get(loadConfig({ env }).config, path), expected);
    });
  }
});

Deno.test("config: the port and base URL drive the development base URL and origins", () => {
  const { config, defaultsUsed } = loadConfig({
    env: { SVC_PORT: "9000", SVC_DATABASE_URL: "postgres://h/db" },
  });
  assert.equal(config.server.baseUrl, "http://localhost:9000");
  assert.deepEqual(config.relyingParty.origins, ["http://localhost:9000"]);
  assert.ok(!defaultsUsed.includes("SVC_PORT"));
  assert.ok(!defaultsUsed.includes("SVC_DATA_DIR"), "no data folder is used with Postgres");

  // Port 0: once listening, the defaulted base URL and origins follow the real port.
  const zero = loadConfig({ env: { SVC_PORT: "0" } });
  const bound = withListenPort(zero, 41234);
  assert.equal(bound.config.server.port, 41234);
  assert.equal(bound.config.server.baseUrl, "http://localhost:41234");
  assert.deepEqual(bound.config.relyingParty.origins, ["http://localhost:41234"]);
  const explicit = withListenPort(
    loadConfig({ env: { SVC_PORT: "0", SVC_BASE_URL: "http://localhost:3000/svc" } }),
    41234,
  );
  assert.equal(explicit.config.server.baseUrl, "http://localhost:3000/svc");
  assert.deepEqual(explicit.config.relyingParty.origins, ["http://localhost:3000"]);
});

Deno.test("config: environment variables override the file, which overrides the defaults", () => {
  const fileText = JSON.stringify({
    server: { port: 7000, host: "0.0.0.0" },
    storage: { kind: "postgres", url: "postgres://file/db" },
    tokens: { accessTokenTtlSeconds: 120, mfaTokenTtlSeconds: 60 },
    abuse: { perIp: { limit: 50 } },
  });
  const { config, defaultsUsed } = loadConfig({
    env: { SVC_CONFIG_FILE: "/etc/svc.json", SVC_PORT: "7001", SVC_MFA_TOKEN_TTL_SECONDS: "90" },
    fileText,
  });
  assert.equal(config.server.port, 7001);
  assert.equal(config.server.host, "0.0.0.0");
  assert.deepEqual(config.storage, { kind: "postgres", url: "postgres://file/db" });
  assert.equal(config.tokens.accessTokenTtlSeconds, 120);
  assert.equal(config.tokens.mfaTokenTtlSeconds, 90);
  assert.equal(config.tokens.refreshTokenTtlSeconds, 2_592_000);
  assert.deepEqual(config.abuse.perIp, { limit: 50, windowSeconds: 300, failMode: "open" });
  assert.deepEqual(defaultsUsed, ["SVC_BASE_URL", "SVC_RP_ID", "SVC_RP_NAME", "SVC_RP_ORIGINS"]);

  // A storage kind from the environment replaces the file's.
  const embedded = loadConfig({ env: { SVC_DATA_DIR: "/data" }, fileText });
  assert.deepEqual(embedded.config.storage, { kind: "embedded", dataDir: "/data" });
});

Deno.test("config: a bad value stops boot with one line naming the setting, the problem and the fix", async (t) => {
  const cases: { env: Env; fileText?: string; message: string | RegExp }[] = [
    {
      env: { SVC_PORT: "abc" },
      message: 'config: SVC_PORT: "abc" is not a port number; set SVC_PORT to an integer between 0 and 65535',
    },
    {
      env: { SVC_PORT: "65536" },
      message:
        'config: SVC_PORT: "65536" is not a port number; set SVC_PORT to an integer between 0 and 65535',
    },
    {
      env: { SVC_ACCESS_TOKEN_TTL_SECONDS: "1.5" },
      message:
        'config: SVC_ACCESS_TOKEN_TTL_SECONDS: "1.5" is not a whole number; set SVC_ACCESS_TOKEN_TTL_SECONDS to a whole number of seconds between 30 and 86400',
    },
    {
      env: { SVC_REFRESH_TOKEN_TTL_SECONDS: "10" },
      message:
        'config: SVC_REFRESH_TOKEN_TTL_SECONDS: "10" is below 60; set SVC_REFRESH_TOKEN_TTL_SECONDS to a whole number of seconds between 60 and 31536000',
    },
    {
      env: { SVC_HOST: "http://x" },
      message: /^config: SVC_HOST: "http:\/\/x" is not a host name or IP address; set SVC_HOST to /,
    },
    {
      env: { SVC_BASE_URL: "localhost:8080" },
      message:
        /^config: SVC_BASE_URL: "localhost:8080" is not an absolute http\(s\) URL; set SVC_BASE_URL to /,
    },
    {
      env: { SVC_PATH_BASE: "auth" },
      message: /^config: SVC_PATH_BASE: "auth" is not a URL path; set SVC_PATH_BASE to /,
    },
    {
      env: { SVC_DATA_DIR: "  " },
      message: /^config: SVC_DATA_DIR: " {2}" is empty or not text; set SVC_DATA_DIR to a folder/,
    },
    // The password of a database URL never reaches the message.
    {
      env: { SVC_DATABASE_URL: "mysql://svc:hunter2@db/svc" },
      message:
        'config: SVC_DATABASE_URL: "mysql://svc:***@db/svc" is not a postgres:// URL; set SVC_DATABASE_URL to a URL such as postgres://user:password@host:5432/database',
    },
    {
      env: { SVC_DATABASE_URL: "postgres://db/svc", SVC_DATA_DIR: "/data" },
      message: /^config: SVC_DATA_DIR: is set together with SVC_DATABASE_URL; unset SVC_DATA_DIR/,
    },
    {
      env: { SVC_RP_ID: "https://example.com" },
      message: /^config: SVC_RP_ID: "https:\/\/example.com" is not a domain; set SVC_RP_ID to /,
    },
    // Origins must be absolute http(s) origins, https outside localhost.
    {
      env: { SVC_RP_ORIGINS: "example.com" },
      message:
        /^config: SVC_RP_ORIGINS: "example.com" is not an http\(s\) origin; set SVC_RP_ORIGINS to origins such as/,
    },
    {
      env: { SVC_RP_ORIGINS: "https://example.com/login" },
      message: /^config: SVC_RP_ORIGINS: "https:\/\/example.com\/login" is not an http\(s\) origin;/,
    },
    {
      env: { SVC_RP_ORIGINS: "ftp://example.com" },
      message: /^config: SVC_RP_ORIGINS: "ftp:\/\/example.com" is not an http\(s\) origin;/,
    },
    {
      env: { SVC_RP_ORIGINS: "http://example.com" },
      message: /^config: SVC_RP_ORIGINS: "http:\/\/example.com" is not a secure origin/,
    },
    {
      env: { SVC_RP_ORIGINS: "," },
      message: /^config: SVC_RP_ORIGINS: "," is empty; set SVC_RP_ORIGINS to at least one origin/,
    },
    {
      env: { SVC_ABUSE_PER_IP_FAIL_MODE: "maybe" },
      message:
        /^config: SVC_ABUSE_PER_IP_FAIL_MODE: "maybe" is not a failure mode; set SVC_ABUSE_PER_IP_FAIL_MODE to "open"/,
    },
    {
      env: { SVC_WEBHOOK_RETRY_SCHEDULE_SECONDS: "60,soon" },
      message:
        /^config: SVC_WEBHOOK_RETRY_SCHEDULE_SECONDS: "soon" is not a delay; set SVC_WEBHOOK_RETRY_SCHEDULE_SECONDS to whole numbers/,
    },
    {
      env: { SVC_RISK_STEP_UP_AT: "90" },
      message:
        "config: SVC_RISK_STEP_UP_AT: 90 is above the block threshold 80 (SVC_RISK_BLOCK_AT); set SVC_RISK_STEP_UP_AT to at most 80",
    },
    {
      env: { SVC_SIGNING_KEY_OVERLAP_SECONDS: "60" },
      message:
        "config: SVC_SIGNING_KEY_OVERLAP_SECONDS: 60 is below the access token lifetime 600 (SVC_ACCESS_TOKEN_TTL_SECONDS), so tokens signed before a rotation would fail early; set SVC_SIGNING_KEY_OVERLAP_SECONDS to at least 600",
    },
    {
      env: { SVC_SESSION_IDLE_TIMEOUT_SECONDS: "90000", SVC_SESSION_ABSOLUTE_TIMEOUT_SECONDS: "3600" },
      message:
        "config: SVC_SESSION_IDLE_TIMEOUT_SECONDS: 90000 is above the absolute timeout 3600 (SVC_SESSION_ABSOLUTE_TIMEOUT_SECONDS); set SVC_SESSION_IDLE_TIMEOUT_SECONDS to at most 3600",
    },
    {
      env: { SVC_COOKIE_SAME_SITE: "None", SVC_COOKIE_SECURE: "never" },
      message: /^config: SVC_COOKIE_SAME_SITE: None requires Secure cookies/,
    },
    {
      env: { SVC_COOKIE_SAME_SITE: "lax" },
      message:
        /^config: SVC_COOKIE_SAME_SITE: "lax" is not a SameSite value; set SVC_COOKIE_SAME_SITE to "Strict"/,
    },
    {
      env: { SVC_BOOTSTRAP_ADMIN_EMAIL: "admin" },
      message: /^config: SVC_BOOTSTRAP_ADMIN_EMAIL: "admin" is not an email address;/,
    },
    {
      env: { SVC_BOOTSTRAP_ADMIN_PASSWORD: "secret-password" },
      message: /^config: SVC_BOOTSTRAP_ADMIN_EMAIL: not set while SVC_BOOTSTRAP_ADMIN_PASSWORD is; set both/,
    },
    {
      env: { SVC_BOOTSTRAP_ADMIN_EMAIL: "a@example.com", SVC_BOOTSTRAP_ADMIN_PASSWORD: " " },
      message: /^config: SVC_BOOTSTRAP_ADMIN_PASSWORD: \(hidden value\) is empty or not text;/,
    },
    // The config file: bad JSON, a bad value, an unknown field, a missing field.
    {
      env: { SVC_CONFIG_FILE: "/etc/svc.json" },
      fileText: "{ port: 1 }",
      message:
        /^config: SVC_CONFIG_FILE: \/etc\/svc.json is not valid JSON \(.*\); fix the file or unset SVC_CONFIG_FILE$/,
    },
    { env: {}, fileText: "[1]", message: /^config: SVC_CONFIG_FILE: the config file is not a JSON object;/ },
    {
      env: { SVC_CONFIG_FILE: "/etc/svc.json" },
      fileText: '{"server": {"port": "8080"}}',
      message:
        'config: server.port in /etc/svc.json: "8080" is not a port number; set server.port in /etc/svc.json to an integer between 0 and 65535',
    },
    {
      env: { SVC_CONFIG_FILE: "/etc/svc.json" },
      fileText: '{"server": {"prot": 8080}}',
      message:
        "config: server.prot in /etc/svc.json: is not a setting of svc; remove it or fix its name (did you mean port?)",
    },
    {
      env: { SVC_CONFIG_FILE: "/etc/svc.json" },
      fileText: '{"tokens": 600}',
      message:
        "config: tokens in /etc/svc.json: 600 is not an object; set tokens in /etc/svc.json to an object with the fields accessTokenTtlSeconds, refreshTokenTtlSeconds, mfaTokenTtlSeconds, signingKeyOverlapSeconds, refreshGraceSeconds, nativeRsaSigner",
    },
    {
      env: { SVC_CONFIG_FILE: "/etc/svc.json" },
      fileText: '{"storage": {"kind": "postgres"}}',
      message:
        "config: storage.url in /etc/svc.json: not set; set storage.url in /etc/svc.json to a URL such as postgres://user:password@host:5432/database",
    },
    {
      env: { SVC_CONFIG_FILE: "/etc/svc.json" },
      fileText: '{"storage": {"kind": "sqlite"}}',
      message: /^config: storage.kind in \/etc\/svc.json: "sqlite" is not a storage kind;/,
    },
    {
      env: { SVC_CONFIG_FILE: "/etc/svc.json" },
      fileText: '{"relyingParty": {"origins": ["https://example.com", "example.org"]}}',
      message:
        /^config: relyingParty.origins.1 in \/etc\/svc.json: "example.org" is not an http\(s\) origin;/,
    },
  ];
  for (const { env, fileText, message } of cases) {
    await t.step(`${JSON.stringify(env)} ${fileText ?? ""}`, () => {
      const actual = failure(env, fileText);
      if (typeof message === "string") assert.equal(actual, message);
      else assert.match(actual, message);
    });
  }
});

Deno.test("config: a secret never appears in an error message", () => {
  const message = failure({
    SVC_BOOTSTRAP_ADMIN_EMAIL: "a@example.com",
    SVC_BOOTSTRAP_ADMIN_PASSWORD: "\0hunter2",
  });
  assert.ok(!message.includes("hunter2"), message);
});

Deno.test("config: the relying-party identity is required outside localhost", async (t) => {
  const production = {
    SVC_BASE_URL: "https://id.example.com",
    SVC_RP_ID: "example.com",
    SVC_RP_NAME: "Example",
    SVC_RP_ORIGINS: "https://id.example.com,https://app.example.com",
  };
  const { config, defaultsUsed } = loadConfig({ env: production });
  assert.deepEqual(config.relyingParty, {
    id: "example.com",
    name: "Example",
    origins: ["https://id.example.com", "https://app.example.com"],
  });
  assert.ok(!defaultsUsed.some((name) => name.startsWith("SVC_RP_")));

  for (const missing of ["SVC_RP_ID", "SVC_RP_NAME", "SVC_RP_ORIGINS"] as const) {
    await t.step(`without ${missing}`, () => {
      const env: Env = { ...production, [missing]: undefined };
      const message = failure(env);
      assert.ok(
        message.startsWith(
          `config: ${missing}: not set while the base URL https://id.example.com (SVC_BASE_URL) is not localhost; set ${missing} to `,
        ),
        message,
      );
      assert.match(message, /the relying-party identity is required outside development\)$/);
    });
  }
  await t.step("only the base URL set: the RP id is named first", () => {
    assert.match(
      failure({ SVC_BASE_URL: "https://id.example.com" }),
      /^config: SVC_RP_ID: not set while the base URL/,
    );
  });
  await t.step("the base URL from the file", () => {
    const message = failure(
      { SVC_CONFIG_FILE: "svc.json" },
      '{"server": {"baseUrl": "https://id.example.com"}}',
    );
    assert.match(
      message,
      /^config: SVC_RP_ID: not set while the base URL https:\/\/id.example.com \(server.baseUrl in svc.json\)/,
    );
  });
  await t.step("localhost needs none of them", () => {
    for (
      const baseUrl of [
        "http://localhost:3000",
        "http://127.0.0.1:8080",
        "http://svc.localhost",
        "http://[::1]:8080",
      ]
    ) {
      assert.equal(loadConfig({ env: { SVC_BASE_URL: baseUrl } }).config.relyingParty.id, "localhost");
    }
  });
});

Deno.test("config: an unknown SVC_ variable is rejected as a likely typo", async (t) => {
  const cases: [Env, string][] = [
    [
      { SVC_PROT: "8080" },
      "config: SVC_PROT: is not a setting of svc; remove it or fix its name (did you mean SVC_PORT?)",
    ],
    [
      { SVC_RP_ORIGIN: "https://example.com" },
      "config: SVC_RP_ORIGIN: is not a setting of svc; remove it or fix its name (did you mean SVC_RP_ORIGINS?)",
    ],
    [
      { SVC_FLUX_CAPACITOR: "1" },
      "config: SVC_FLUX_CAPACITOR: is not a setting of svc; remove it or fix its name (svc help lists every setting)",
    ],
  ];
  for (const [env, message] of cases) {
    await t.step(Object.keys(env)[0], () => assert.equal(failure(env), message));
  }
  // Variables outside the SVC_ prefix are none of svc's business.
  assert.equal(loadConfig({ env: { PORT: "abc", svc_port: "abc", PATH: "/bin" } }).config.server.port, 8080);
});

Deno.test("config: every field of the schema has exactly one environment variable, with a default or a reason", () => {
  const leaves: string[] = [];
  const walk = (node: any, path: string[]): void => {
    while (node.type === "optional") node = node.wrapped;
    if (node.type === "variant") {
      for (const option of node.options) walk(option, path);
    } else if (node.type === "strict_object") {
      for (const [key, child] of Object.entries(node.entries)) walk(child, [...path, key]);
    } else if (!(path.at(-1) === "kind" && path[0] === "storage")) {
      leaves.push(path.join("."));
    }
  };
  walk(SvcConfigSchema, []);
  const envLeaves = leaves.filter((path) => !FILE_ONLY_SETTINGS.includes(path));
  assert.deepEqual(envLeaves.sort(), ENV_SETTINGS.map((s) => s.path).sort());
  assert.ok(FILE_ONLY_SETTINGS.every((path) => leaves.includes(path)));
  assert.equal(new Set(ENV_SETTINGS.map((s) => s.name)).size, ENV_SETTINGS.length);
  for (const s of ENV_SETTINGS) {
    assert.match(s.name, /^SVC_[A-Z0-9_]+$/);
    assert.ok(settingDefault(s).length > 0, s.name);
  }
  // The file is the same schema: a whole default config round-trips.
  const { config } = loadConfig({ env: {} });
  assert.deepEqual(v.parse(SvcConfigSchema, JSON.parse(JSON.stringify(config))), config);
});
