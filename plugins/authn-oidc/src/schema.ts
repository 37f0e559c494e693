/** The `jwt` list: AuthenticationConfiguration's JWT authenticators, in the plugin's options or in a configFile. */
export const JWT_ENTRIES_SCHEMA = {
  type: 'array',
  description: 'The issuers whose tokens are accepted, as the `jwt` list of an AuthenticationConfiguration',
  items: {
    type: 'object',
    required: ['issuer'],
    properties: {
      issuer: {
        type: 'object',
        required: ['url', 'audiences'],
        properties: {
          url: { type: 'string', description: "The issuer URL (https); a token is this issuer's when its `iss` is exactly this" },
          discoveryURL: { type: 'string', description: 'Where the discovery document is (default: <url>/.well-known/openid-configuration)' },
          audiences: { type: 'array', items: { type: 'string' }, description: "A token's `aud` must hold one of these" },
          audienceMatchPolicy: { type: 'string', enum: ['MatchAny'], description: 'The only policy: any one of the audiences will do' },
          certificateAuthority: { type: 'string', description: "PEM certificates trusted for the issuer's TLS (default: the system's roots)" },
          certificateAuthorityFile: { type: 'string', description: "The same, from a file (relative to the config file's folder)" },
        },
      },
      claimValidationRules: {
        type: 'array',
        description: 'Claims a token must carry with exactly this value',
        items: {
          type: 'object',
          required: ['claim', 'requiredValue'],
          properties: { claim: { type: 'string' }, requiredValue: { type: 'string' } },
        },
      },
      claimMappings: {
        type: 'object',
        properties: {
          username: {
            type: 'object',
            description: 'The username: its claim (default "sub") and a prefix (default "<url>#", none for the "email" claim; "" for none)',
            properties: { claim: { type: 'string' }, prefix: { type: 'string' } },
          },
          groups: {
            type: 'object',
            description: 'The groups: a claim holding a string or a list of strings, and a prefix (default "")',
            properties: { claim: { type: 'string' }, prefix: { type: 'string' } },
          },
          uid: { type: 'object', description: 'The uid: a claim holding a string', properties: { claim: { type: 'string' } } },
        },
      },
    },
  },
} as const;
