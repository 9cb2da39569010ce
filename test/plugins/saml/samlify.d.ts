// The declarations of `samlify` the tests use, without the `lib.dom` reference its types pull in
// through `@xmldom/xmldom` (see plugins/saml/dom.ts).

export interface Entity {
  getMetadata(): string;
}

export interface IdentityProviderInstance extends Entity {
  createLoginResponse(
    sp: Entity,
    requestInfo: { extract: Record<string, unknown> },
    binding: string,
    user: Record<string, unknown>,
    options: {
      customTagReplacement: (template: string) => { id: string; context: string };
      encryptThenSign?: boolean;
    },
  ): Promise<{ id: string; context: string }>;
}

export declare function IdentityProvider(settings: Record<string, unknown>): IdentityProviderInstance;
export declare function ServiceProvider(settings: Record<string, unknown>): Entity;
export declare function setSchemaValidator(validator: { validate: (xml: string) => Promise<string> }): void;
export declare const SamlLib: {
  readonly defaultLoginResponseTemplate: { readonly context: string };
  replaceTagsByValue(template: string, values: Record<string, unknown>): string;
};
declare const samlify: {
  readonly SamlLib: typeof SamlLib;
};
export default samlify;
