// Lint: typescript-eslint recommended rules plus Nx module boundaries by tag.
//   type:app   -> may use libs and proto, never other apps
//   type:lib   -> may use libs and proto
//   type:proto -> generated code, depends on nothing of ours
//   type:tool  -> may use anything
// scope:testing libs (test helpers) may only be imported by spec files and tools.
// Spec files of apps and libs may also use tool projects (the real control plane harness of
// tools/k8s-testenv, the swtpm fixture): tests need real components, product code must not.
import nx from '@nx/eslint-plugin';

// No code outside the variant table decides by a variant's name (docs/adr/0035-variant-descriptor-table.md):
// a built-in variant name as a string in product code is an error; ask the variant's descriptor instead.
const VARIANT_NAME_RULE = {
  selector: ':not(TSLiteralType) > Literal[value=/^(dummy|qemu-vtpm|qemu-tdx|aws-nitro-tpm|aws-sev-snp|azure-sev-snp|azure-tdx|azure-trustedlaunch|gcp-sev-es|gcp-sev-snp)$/]',
  message: 'no decisions by variant name outside libs/attestation/src/variants (docs/adr/0035): use the variant descriptor (variantDescriptor(v).platform, .insecure, .sources, ...)',
};

export default [
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  {
    ignores: ['**/node_modules/**', '**/dist/**', 'libs/proto/src/gen/**', '**/.cache/**', 'tools/k8s-testenv/go/**', 'tools/interop/**/*.go'],
  },
  {
    files: ['**/*.ts', '**/*.mts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib', 'type:proto'] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib', 'type:proto'] },
            { sourceTag: 'type:proto', onlyDependOnLibsWithTags: ['type:proto'] },
            { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['type:lib', 'type:proto', 'type:app', 'type:tool'] },
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='console'][callee.property.name=/^(log|info|debug)$/] > Identifier[name=/secret|key|token|password/i]",
          message: 'never print secrets',
        },
      ],
    },
  },
  {
    // One fixture convention (docs/CONTRIBUTING.md): test helpers are `*.fixture.ts` files, a
    // package's `./testing` entry is its `src/testing.ts`, and libs/testing is for tests. Product
    // code imports none of them.
    files: ['apps/*/src/**/*.ts', 'libs/*/src/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.fixture.ts', '**/testing.ts', '**/testing/**', 'libs/testing/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@asterism/testing', '@asterism/*/testing'], message: 'test helpers are for specs and fixtures only (docs/CONTRIBUTING.md)' },
            { group: ['**/*.fixture.js', '**/testing.js', '**/testing/*'], message: 'fixtures are for specs and other fixtures only (docs/CONTRIBUTING.md)' },
          ],
        },
      ],
    },
  },
  {
    // gRPC statuses live only at the RPC boundary (docs/adr/0027): domain modules (flows, issuers,
    // validators, libs) raise AsterismErrors and never import grpc-js. Allowed: the transport libs
    // and the files that are servers, clients or process wiring. Tests may use grpc-js freely.
    files: ['apps/*/src/**/*.ts', 'libs/*/src/**/*.ts'],
    ignores: [
      '**/*.spec.ts',
      'libs/atls/**',
      'libs/proto/**',
      'libs/service-runtime/**',
      'libs/logger/src/grpc-interceptor.ts',
      'libs/logger/src/join-id.ts',
      'apps/*/src/main.ts',
      'apps/*/src/service.ts',
      'apps/bootstrapper/src/initserver/init-server.ts',
      'apps/bootstrapper/src/joinclient/atls-dialer.ts',
      'apps/bootstrapper/src/recovery/recovery-server.ts',
      'apps/bootstrapper/src/upgrade-agent/agent-server.ts',
      'apps/cli/src/upgrade/agent-client.ts',
      'apps/verification-service/src/verification-service.ts',
      'apps/cli/src/init/grpc-connector.ts',
      'apps/cli/src/verify/grpc-attestation-source.ts',
      'apps/cli/src/testing/attestation-servers.fixture.ts',
      'libs/node-attestation/src/grpc-attestation-source.ts',
      'libs/node-attestation/src/testing/verify-server.ts',
      'apps/joinservice/src/join-server.ts',
      'apps/joinservice/src/keyservice-client.ts',
      'apps/keyservice/src/server.ts',
      'apps/keyservice/src/utf8-guard.ts',
    ],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [{ name: '@grpc/grpc-js', message: 'map errors to gRPC statuses at the RPC boundary (toStatus in @asterism/service-runtime); domain modules throw AsterismErrors' }] },
      ],
    },
  },
  {
    // One server shape (docs/adr/0027): product code builds gRPC servers only through GrpcServer.
    // Fixtures (a peer answering a fixed status) and tools may build their own. The console rule of
    // the first block is repeated: a later no-restricted-syntax replaces it for these files.
    files: ['apps/*/src/**/*.ts', 'libs/*/src/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.fixture.ts', '**/testing/**', 'libs/atls/src/services.fixture.ts', 'libs/service-runtime/src/grpc-server.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='console'][callee.property.name=/^(log|info|debug)$/] > Identifier[name=/secret|key|token|password/i]",
          message: 'never print secrets',
        },
        {
          selector: "NewExpression[callee.object.name='grpc'][callee.property.name='Server']",
          message: 'build gRPC servers with GrpcServer from @asterism/service-runtime (the one server shape, docs/adr/0027)',
        },
        VARIANT_NAME_RULE,
      ],
    },
  },
  {
    // The variant modules are where variant names live (docs/adr/0035): the same rules without the variant-name one.
    files: ['libs/attestation/src/variants/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='console'][callee.property.name=/^(log|info|debug)$/] > Identifier[name=/secret|key|token|password/i]",
          message: 'never print secrets',
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib', 'type:proto', 'type:tool'] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib', 'type:proto', 'type:tool'] },
            { sourceTag: 'type:proto', onlyDependOnLibsWithTags: ['type:proto'] },
            { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['type:lib', 'type:proto', 'type:app', 'type:tool'] },
          ],
        },
      ],
    },
  },
  {
    // The simulated node (tools/simulated-node) is a second composition root of the bootstrapper
    // (docs/adr/0036-node-runtime.md): it may import the app's runtime entry point, nothing else of it,
    // and the verification service's package entry point (it serves that service in-process).
    files: ['tools/simulated-node/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: ['@asterism/bootstrapper/runtime', '@asterism/verification-service'],
          depConstraints: [{ sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['type:lib', 'type:proto', 'type:app', 'type:tool'] }],
        },
      ],
    },
  },
];
