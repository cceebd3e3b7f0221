/**
 * The walls between Fjord's rooms (docs/architecture.md): every room imports only rooms below it.
 *
 *   protocol <- common <- config <- storage <- {server, auth, controller, client, quota}
 *            <- {coordinator, fetcher, share} <- replication <- mirror <- metrics <- broker <- cli
 *
 * `admin` is a library over the client: it imports only client, config, common and protocol, and
 * only cli uses it. Rooms of one tier may import each other, but no cycle may leave a room.
 */
const TIERS = [['protocol'], ['common'], ['config'], ['storage'], ['server', 'auth', 'controller', 'client', 'quota'], ['coordinator', 'fetcher', 'share'], ['replication'], ['mirror'], ['metrics'], ['broker'], ['cli']];

const room = (names) => `^src/(${names.join('|')})/`;

/** For each tier: it may not import any room of a tier above it. */
const layerRules = TIERS.slice(0, -1).map((tier, i) => ({
  name: `${tier.join('-')}-imports-only-downward`,
  comment: `${tier.join(', ')} may not import ${TIERS.slice(i + 1).flat().join(', ')}`,
  severity: 'error',
  from: { path: room(tier) },
  to: { path: room(TIERS.slice(i + 1).flat()) },
}));

module.exports = {
  forbidden: [
    {
      name: 'protocol-is-sans-io',
      comment: 'src/protocol touches no sockets or files: it is tested with byte arrays',
      severity: 'error',
      from: { path: '^src/protocol/' },
      to: { dependencyTypes: ['core'], path: '^(node:)?(net|fs|tls|dgram|http)(/|$)' },
    },
    {
      name: 'generated-imports-only-protocol',
      comment: 'generated codecs depend on the protocol primitives alone',
      severity: 'error',
      from: { path: '^src/protocol/generated/' },
      to: { pathNot: '^src/protocol/' },
    },
    ...layerRules,
    {
      name: 'admin-imports-only-client-config-common-protocol',
      severity: 'error',
      from: { path: '^src/admin/' },
      to: { path: '^src/', pathNot: room(['admin', 'client', 'config', 'common', 'protocol']) },
    },
    {
      name: 'only-cli-uses-admin',
      severity: 'error',
      from: { path: '^src/', pathNot: room(['admin', 'cli']) },
      to: { path: '^src/admin/' },
    },
    {
      name: 'nothing-imports-cli',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'cli-loads-the-broker-only-to-start-it',
      comment: "`fjord topics`, `configs`, `groups` and `cluster-mirrors` are clients: loading the broker's modules would add about 0.4 s to every call",
      severity: 'error',
      from: { path: '^src/cli/main\\.ts$' },
      to: { path: '^src/cli/start\\.ts$', dependencyTypesNot: ['dynamic-import'] },
    },
    {
      name: 'client-commands-reach-no-broker',
      severity: 'error',
      from: { path: '^src/cli/(topics|configs|groups|cluster-mirrors)\\.ts$' },
      to: { path: room(['broker']), reachable: true },
    },
    {
      name: 'client-imports-no-server',
      comment: "a client (the mirror's source client, the inter-broker clients, the CLI's) reads listener and keystore settings from config, never the server's room",
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/server/' },
    },
    {
      name: 'auth-imports-no-controller',
      comment: 'the ACL vocabulary and the authorizer know no metadata records; the controller stores what auth defines',
      severity: 'error',
      from: { path: '^src/auth/' },
      to: { path: '^src/controller/' },
    },
    {
      name: 'broker-log-code-imports-no-mirror',
      comment: "the replica side maps the image to logs; the mirrored partitions' epoch policy is passed in",
      severity: 'error',
      from: { path: '^src/broker/replica-manager\\.ts$' },
      to: { path: '^src/mirror/' },
    },
    {
      name: 'replication-imports-no-mirror-fetcher',
      comment: "the follower and the mirror share what they both use below both (the fetched-batch walk in protocol, the truncation rules in storage, the throttle in quota), not the mirror fetcher's room",
      severity: 'error',
      from: { path: '^src/replication/' },
      to: { path: '^src/fetcher/' },
    },
    {
      name: 'no-cycle-between-rooms',
      comment: 'a cycle of imports that leaves a room ties two rooms into one',
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { circular: true, viaSomeNot: '^src/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules|\\.cache)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.cjs'] },
  },
};
