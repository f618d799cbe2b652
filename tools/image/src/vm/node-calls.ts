#!/usr/bin/env node
/**
 * Calls a booted node makes its state disk go through the states of docs/adr/0041 (for the
 * node image's state-disk test): `init` sends an InitRequest with a chosen init secret, master
 * secret and measurement salt (the node locks, re-keys its state disk and writes its node state
 * before the Kubernetes step, which fails on a node without a cluster); `recover` pushes a
 * master secret to the node's recovery server. Both over aTLS, the node validated against the
 * attestation config given. Runs inside the VM's network namespace; prints one JSON line
 * `{"ok": bool, "code"?: number, "error"?: string}`.
 * Usage: node-calls.ts init <host:port> <attestation-config.json> <init-secret> <master-key-hex> <master-salt-hex> <measurement-salt-hex>
 *        node-calls.ts recover <host:port> <attestation-config.json> <master-key-hex> <master-salt-hex>
 */
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { atlsChannelCredentials } from '@asterism/atls';
import { validatorFromConfigJson } from '@asterism/attestation';
import { encodeClusterKmsUri, NO_STORE_URI } from '@asterism/crypto';
import { init, recoverproto } from '@asterism/proto';

type Outcome = { ok: boolean; code?: number; error?: string };

const hex = (s: string) => Buffer.from(s, 'hex');

function credentials(configPath: string) {
  return atlsChannelCredentials({ validators: [validatorFromConfigJson(readFileSync(configPath), 'qemu-vtpm')] });
}

async function callInit(target: string, config: string, secret: string, key: string, salt: string, measurementSalt: string): Promise<Outcome> {
  const client = new init.APIClient(target, credentials(config));
  const call = client.init({
    kmsUri: encodeClusterKmsUri({ key: hex(key), salt: hex(salt) }),
    storageUri: NO_STORE_URI,
    measurementSalt: hex(measurementSalt),
    kubernetesVersion: '',
    conformanceMode: false,
    kubernetesComponents: [],
    initSecret: Buffer.from(secret),
    clusterName: 'vm-state-disk',
    apiserverCertSans: [],
    serviceCidr: '',
  });
  return new Promise((resolve) => {
    let failure: string | undefined;
    call.on('data', (m: init.InitResponse) => {
      if (m.initFailure) failure = m.initFailure.error;
    });
    call.on('error', (err: grpc.ServiceError) => resolve({ ok: false, code: err.code, error: err.details }));
    call.on('end', () => resolve(failure ? { ok: false, error: failure } : { ok: true }));
  }).finally(() => client.close()) as Promise<Outcome>;
}

async function callRecover(target: string, config: string, key: string, salt: string): Promise<Outcome> {
  const client = new recoverproto.APIClient(target, credentials(config));
  return new Promise<Outcome>((resolve) =>
    client.recover({ kmsUri: encodeClusterKmsUri({ key: hex(key), salt: hex(salt) }), storageUri: NO_STORE_URI }, new grpc.Metadata(), { deadline: Date.now() + 300_000 }, (err) =>
      resolve(err ? { ok: false, code: err.code, error: err.details } : { ok: true }),
    ),
  ).finally(() => client.close());
}

const [command, target, config, ...rest] = process.argv.slice(2);
let outcome: Promise<Outcome>;
if (command === 'init' && target && config && rest.length === 4) outcome = callInit(target, config, rest[0]!, rest[1]!, rest[2]!, rest[3]!);
else if (command === 'recover' && target && config && rest.length === 2) outcome = callRecover(target, config, rest[0]!, rest[1]!);
else {
  process.stderr.write('usage: node-calls.ts init <host:port> <config> <secret> <key-hex> <salt-hex> <measurement-salt-hex> | recover <host:port> <config> <key-hex> <salt-hex>\n');
  process.exit(2);
}
outcome.then(
  (o) => {
    process.stdout.write(`${JSON.stringify(o)}\n`);
    process.exit(0);
  },
  (err: unknown) => {
    process.stderr.write(`node-calls: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
