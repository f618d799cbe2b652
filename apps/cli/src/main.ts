#!/usr/bin/env node
/** asterism CLI: `init` creates a cluster through the first node's attested InitServer; `verify` attests a node; `nodes`, `node` and `config` run continuous attestation (docs/protocol/continuous-attestation.md); `upgrade plan|apply` checks and rolls out a Kubernetes upgrade (docs/protocol/upgrade.md); `recover` unlocks nodes after a full control-plane outage; `version` says what this build is. */
import * as grpc from '@grpc/grpc-js';
import { ConfigError } from './config/cli-config.js';
import { ServicesDeployError } from './init/deploy-services.js';
import { InitCommandError } from './init/init-command.js';
import { initCommand } from './init/init-cli.js';
import { configCommand } from './nodes/config-cli.js';
import { nodeCommand, nodesCommand } from './nodes/node-cli.js';
import { recoverCommand } from './recover/recover-cli.js';
import { upgradeCommand } from './upgrade/upgrade-cli.js';
import { EXIT, UsageError } from './usage.js';
import { CliValidatorError } from './validators/errors.js';
import { verifyCommand } from './verify/verify-cli.js';
import { versionCommand } from './version/version-cli.js';
import { VerifyNodeError } from './verify/running-node.js';

const USAGE = `Usage: asterism <command> [flags]

Commands:
  init     initialize the first control-plane node and create the cluster
  verify   attest a node and compare its measurements with the expected ones
  recover  unlock nodes that wait for recovery (every control plane rebooted at once)
  nodes    every node's continuous attestation state (alias: status)
  node     quarantine or readmit a node (asterism node quarantine|readmit <node>)
  config   check or apply a new attestation config against the running nodes (config check|apply)
  upgrade  plan and apply an upgrade of the cluster to the next Kubernetes version (upgrade plan|apply)
  version  print the CLI version, its commit, the supported Kubernetes versions and attestation variants
  help     show this help (also: asterism <command> --help)

Settings come from flags, then from the config file (default ./asterism-conf.yaml):
  clusterName, kubernetesVersion, apiServerCertSANs, serviceCIDR, initSecretFile,
  attestation: { variant, configFile }`;

const out = { stdout: (t: string) => void process.stdout.write(t), stderr: (t: string) => void process.stderr.write(t) };

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'init':
        return await initCommand(rest);
      case 'verify':
        return await verifyCommand(rest, out);
      case 'recover':
        return await recoverCommand(rest, out);
      case 'nodes':
      case 'status':
        return await nodesCommand(rest, out);
      case 'node':
        return await nodeCommand(rest, out);
      case 'config':
        return await configCommand(rest, out);
      case 'upgrade':
        return await upgradeCommand(rest, out);
      case 'version':
      case '--version':
        return await versionCommand(rest, out);
      case undefined:
      case 'help':
      case '-h':
      case '--help':
        process.stdout.write(`${USAGE}\n`);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`asterism: ${(err as Error).message}\n\nRun "asterism ${command && !command.startsWith('-') ? `${command} ` : ''}--help" for usage.\n`);
      return EXIT.usage;
    }
    if (err instanceof VerifyNodeError || err instanceof CliValidatorError) {
      process.stderr.write(`asterism ${command}: ${err.message}\n`);
      return EXIT.usage;
    }
    if (err instanceof ConfigError || err instanceof InitCommandError || err instanceof ServicesDeployError) {
      process.stderr.write(`asterism ${command}: ${err.message}\n`);
      return 1;
    }
    if ((err as { code?: unknown }).code === grpc.status.UNAVAILABLE) {
      process.stderr.write(`asterism ${command}: ${(err as Error).message}\n`);
      return 1;
    }
    process.stderr.write(`asterism ${command}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

// The command is over once main resolves: exit with its code instead of waiting for whatever a
// failed step left open (an init whose service deployment failed, helm missing, printed its error
// and then hung). stdout/stderr writes to files, pipes and terminals are synchronous on Linux.
main(process.argv.slice(2)).then(
  (code) => {
    process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`asterism: fatal: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
