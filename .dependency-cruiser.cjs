/**
 * The arrows of docs/architecture.md ("Which way the arrows point"), checked on every `npm test` by
 * test/hygiene/arrows.test.ts. A rule here is a sentence there; change both together.
 *
 * Only production code is cruised (test files beside the code may wire a client to the simulator on purpose).
 * Type-only imports count: a type is an arrow too.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'A cycle makes two files one module in disguise; split out what both need.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      comment: 'The domain imports nothing of ours outside src/domain.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'port-imports-only-the-domain',
      comment: 'platforms/adapter.ts is the broker port: it speaks in domain types only.',
      severity: 'error',
      from: { path: '^src/platforms/adapter\\.ts$' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'engine-knows-only-the-port',
      comment: 'The engine reaches brokers through platforms/adapter.ts only: no platform, protocol or simulator code.',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: '^src/(platforms/(?!adapter\\.ts$)|protocols/|simulator/|api/|cli/|demo/|web/|main\\.ts$)' },
    },
    {
      name: 'simulator-is-not-a-client',
      comment:
        'The simulator imports none of our adapters, nor the port: it has its own types and shares only src/protocols.',
      severity: 'error',
      from: { path: '^src/simulator/' },
      to: { path: '^src/(platforms|engine|store|api|events|webhooks|auth|bus|cli|demo|web)/' },
    },
    {
      name: 'adapters-use-only-the-simulator-contract',
      comment:
        "An adapter may know the simulator's published contract (simulator/contract.ts), never its implementation.",
      severity: 'error',
      from: { path: '^src/platforms/' },
      to: { path: '^src/simulator/', pathNot: '^src/simulator/contract\\.ts$' },
    },
    {
      name: 'adapters-are-not-the-service',
      comment: 'An adapter knows the port, the domain, the protocols and its own helpers, not the engine or the API.',
      severity: 'error',
      from: { path: '^src/platforms/' },
      to: { path: '^src/(engine|store|api|events|webhooks|auth|bus|cli|demo|web)/|^src/main\\.ts$' },
    },
    {
      name: 'protocols-are-neutral',
      comment: 'A wire protocol (src/protocols) is shared by a client and a simulator, so it imports neither.',
      severity: 'error',
      from: { path: '^src/protocols/' },
      to: { path: '^src/', pathNot: '^src/(protocols|domain)/' },
    },
    {
      name: 'web-is-not-the-server',
      comment:
        'The dashboard talks to the server over HTTP only (its types are generated from /openapi.json into src/client/schema.d.ts, shared with copytrade/client); it shares only the platform display names (src/client/platform-names.ts) besides.',
      severity: 'error',
      from: { path: '^src/web/' },
      to: { path: '^src/', pathNot: '^src/(web/|client/(schema\\.d\\.ts|platform-names\\.ts)$)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.tsx?$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.tsx', '.js', '.d.ts'],
    },
  },
};
