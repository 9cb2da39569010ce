/**
 * ASP.NET Core Identity rows for the importer tests. The hashes are ASP.NET Identity's own
 * password-hasher test vectors for "my password" (dotnet/aspnetcore
 * `src/Identity/test/Identity.Test/PasswordHasherTest.cs`): a V2 payload and V3 payloads with
 * the SHA-256 and SHA-512 PRFs.
 */

/** The plaintext of every vector. */
export const ASPNET_PASSWORD = "my password";

/** V2 (marker 0x00, PBKDF2-SHA1, 1000 iterations). */
export const V2_HASH = "AAABAgMEBQYHCAkKCwwNDg+ukCEMDf0yyQ29NYubggHIVY0sdEUfdyeM+E1LtH1uJg==";
/** V3, SHA-256, 250000 iterations. */
export const V3_SHA256_HASH =
  "AQAAAAEAA9CQAAAAIESkQuj2Du8Y+kbc5lcN/W/3NiAZFEm11P27nrSN5/tId+bR1SwV8CO1Jd72r4C08OLvplNlCDc3oQZ8efcW+jQ=";
/** V3, SHA-512, 10000 iterations. */
export const V3_SHA512_HASH =
  "AQAAAAIAACcQAAAAEAABAgMEBQYHCAkKCwwNDg9B0Oxwty+PGIDSp95gcCfzeDvA4sGapUIUov8usXfD6A==";

const base = {
  PhoneNumber: null,
  PhoneNumberConfirmed: false,
  TwoFactorEnabled: false,
  LockoutEnabled: true,
  AccessFailedCount: 0,
  SecurityStamp: "STAMP",
  ConcurrencyStamp: "c0ffee",
};

/** `AspNetUsers` rows: a V2 user, a V3 user locked out until 2099, a user locked out in the past, broken rows. */
export const USERS = [
  {
    ...base,
    Id: "1b7e3c1a-0000-4000-8000-000000000001",
    UserName: "Vera@Example.test",
    NormalizedUserName: "VERA@EXAMPLE.TEST",
    Email: "Vera@Example.test",
    NormalizedEmail: "VERA@EXAMPLE.TEST",
    EmailConfirmed: true,
    PasswordHash: V2_HASH,
    LockoutEnd: null,
  },
  {
    ...base,
    Id: "1b7e3c1a-0000-4000-8000-000000000002",
    UserName: "walt",
    NormalizedUserName: "WALT",
    Email: "walt@example.test",
    NormalizedEmail: "WALT@EXAMPLE.TEST",
    EmailConfirmed: false,
    PasswordHash: V3_SHA256_HASH,
    LockoutEnd: "2099-01-01T00:00:00+00:00",
  },
  {
    ...base,
    Id: "1b7e3c1a-0000-4000-8000-000000000003",
    UserName: "xena@example.test",
    NormalizedUserName: "XENA@EXAMPLE.TEST",
    Email: "xena@example.test",
    NormalizedEmail: "XENA@EXAMPLE.TEST",
    EmailConfirmed: true,
    PasswordHash: V3_SHA512_HASH,
    LockoutEnd: "2020-01-01T00:00:00+00:00",
  },
  {
    ...base,
    Id: "1b7e3c1a-0000-4000-8000-000000000004",
    UserName: "yuri@example.test",
    NormalizedUserName: "YURI@EXAMPLE.TEST",
    Email: "yuri@example.test",
    NormalizedEmail: "YURI@EXAMPLE.TEST",
    EmailConfirmed: true,
    // A V3 payload of PasswordHasherTest cut short: the subkey is too short to be one.
    PasswordHash: "AQAAAAAAAAD6AAAAEAhftMyfTJylOlZT+eEotFXd1elee8ih5Wsj",
    LockoutEnd: null,
  },
  {
    ...base,
    Id: "1b7e3c1a-0000-4000-8000-000000000005",
    UserName: "phone-only",
    NormalizedUserName: "PHONE-ONLY",
    Email: null,
    NormalizedEmail: null,
    EmailConfirmed: false,
    PasswordHash: null,
    LockoutEnd: null,
  },
];

/** `AspNetRoles`. */
export const ROLES = [
  { Id: "r1", Name: "Administrator", NormalizedName: "ADMINISTRATOR", ConcurrencyStamp: "a" },
  { Id: "r2", Name: "Sales Team", NormalizedName: "SALES TEAM", ConcurrencyStamp: "b" },
];

/** `AspNetUserRoles`. */
export const USER_ROLES = [
  { UserId: USERS[0].Id, RoleId: "r1" },
  { UserId: USERS[0].Id, RoleId: "r2" },
  { UserId: USERS[1].Id, RoleId: "r2" },
];

/** `AspNetUserClaims`. */
export const USER_CLAIMS = [
  { Id: 1, UserId: USERS[0].Id, ClaimType: "department", ClaimValue: "finance" },
  { Id: 2, UserId: USERS[0].Id, ClaimType: "permission", ClaimValue: "invoices.read" },
  { Id: 3, UserId: USERS[0].Id, ClaimType: "permission", ClaimValue: "invoices.write" },
];
