/**
 * The cloud vTPM variants from the CLI: nodes on a REAL swtpm provisioned like each cloud's vTPM
 * (tpm2-tools; docs/protocol/cloud-vtpm-variants.md) behind real verify.API servers, checked by
 * `asterism verify --endpoint` with the validator the CLI builds (./cli-validator.ts):
 * aws-nitro-tpm asks EC2 DescribeImages through the AWS SDK against moto on loopback (moto does
 * not model TpmSupport, so the accepting answer comes from a loopback server replaying the
 * documented DescribeImages shape); azure-trustedlaunch fetches the AK chain's missing link from
 * its CA Issuers URL; gcp-sev-es asks the Compute API with the operator's token. Two cases run
 * the `asterism` process itself: AWS credentials from the environment (the SDK's default chain),
 * and exit 2 without Google credentials.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  AZURE_AK_CERT_NV_INDEX,
  AwsNitroTpmIssuer,
  AzureTrustedLaunchIssuer,
  decodeDocument,
  GCE_AK_CERT_NV_INDEX_RSA,
  GCE_AK_TEMPLATE_NV_INDEX_RSA,
  GCE_TECHNOLOGY,
  GceMetadataInstanceSource,
  GcpSevEsIssuer,
  httpCertificateFetcher,
  ImdsIdentitySource,
  unmarshalAttestationConfig,
  validatorFor,
  type Issuer,
} from '@asterism/attestation';
import { gceEventLog, measureGceEvents } from '@asterism/attestation/testing';
import { awsImdsFake, MotoServer, motoUnavailable, seedMotoCluster, type FakeEc2Instance, type LoopbackServer } from '@asterism/metadata/testing';
import { missingComponent, WORKSPACE_ROOT } from '@asterism/testing';
import { akTemplateRsa, decodePublic, encodePublic, publicKeyObject, TPM_ALG } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, tpm2ToolsAvailable, type Swtpm } from '@asterism/tpm/testing';
import { startVerifyServer } from '../testing/attestation-servers.fixture.js';
import { startCloudReplay, type CloudReplay } from '../testing/cloud-replay.fixture.js';
import { GrpcAttestationSource } from '../verify/grpc-attestation-source.js';
import { verifyRunningNode } from '../verify/running-node.js';
import { verifyCommand } from '../verify/verify-cli.js';
import type { CliValidatorOptions } from './cli-validator.js';

const skip = !swtpmAvailable() ? missingComponent('swtpm', SWTPM_INSTALL_HINT) : !tpm2ToolsAvailable() ? missingComponent('tpm2-tools', SWTPM_INSTALL_HINT) : motoUnavailable();
/** The SDK's default chain finds these first; no shared config or instance role is consulted. */
const AWS_ENV = { AWS_ACCESS_KEY_ID: 'testing', AWS_SECRET_ACCESS_KEY: 'testing', AWS_CONFIG_FILE: '/nonexistent', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent', AWS_EC2_METADATA_DISABLED: 'true' };
const TOKEN = 'ya29.operator-token';

/** `asterism` as a process with `env` (output and exit code). */
function cliProcess(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(WORKSPACE_ROOT, 'apps/cli/src/main.ts'), ...args], { cwd: WORKSPACE_ROOT, env });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

async function verify(args: string[], overrides: CliValidatorOptions = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await verifyCommand(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) }, overrides);
  return { code, stdout, stderr };
}

describe('cloud vTPM variants from the CLI (swtpm, moto, loopback cloud endpoints)', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'asterism-cli-cloud-'));
  const f = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  let tpm: Swtpm;
  let cloud: CloudReplay;
  let moto: MotoServer;
  let imds: LoopbackServer;
  let instance: FakeEc2Instance;
  let akPem: string;
  const servers: Record<string, Awaited<ReturnType<typeof startVerifyServer>>> = {};
  const savedEnv = { ...process.env };
  const endpoint: Record<string, string> = {};
  const configs: Record<string, string> = {};

  /** One node: a verify.API server with the variant's issuer, and its attestation config (PCR 0 as measured). */
  async function serve(variant: string, issuer: Issuer, extra: Record<string, unknown> = {}): Promise<void> {
    const server = await startVerifyServer(issuer);
    servers[variant] = server;
    endpoint[variant] = server.endpoint;
    const pcr0 = (await (await tpm.client()).pcrRead([0], TPM_ALG.SHA256)).get(0)!;
    configs[variant] = f(`${variant}.json`);
    writeFileSync(configs[variant], JSON.stringify({ measurements: { 0: { expected: Buffer.from(pcr0).toString('hex'), warnOnly: false } }, ...extra }));
  }

  /** The AK chain of Azure's vTPMs in miniature: root -> CA1 -> CA2 -> AK, each link's issuer at its CA Issuers URL. */
  function azureChain(akPubPem: string): { rootPem: string; akDer: Buffer } {
    writeFileSync(f('ak.pub.pem'), akPubPem);
    const ext = (name: string, aia?: string) => writeFileSync(f(name), `basicConstraints=critical,CA:${aia === undefined || name !== 'ak.ext' ? 'TRUE' : 'FALSE'}\n${aia ? `authorityInfoAccess=caIssuers;URI:${aia}\n` : ''}`);
    openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'root.key', '-subj', '/CN=test vTPM root', '-days', '30', '-out', 'root.pem');
    const ca = (name: string, issuer: string, aia?: string) => {
      ext(`${name}.ext`, aia);
      openssl('req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-subj', `/CN=test vTPM ${name.toUpperCase()}`, '-out', `${name}.csr`);
      openssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${issuer}.pem`, '-CAkey', `${issuer}.key`, '-set_serial', String(name.length + issuer.length), '-days', '30', '-extfile', `${name}.ext`, '-out', `${name}.pem`);
      openssl('x509', '-in', `${name}.pem`, '-outform', 'DER', '-out', `${name}.der`);
    };
    ca('ca1', 'root');
    ca('ca2', 'ca1', `${cloud.base}/pki/ca1.der`);
    ext('ak.ext', `${cloud.base}/pki/ca2.der`);
    openssl('x509', '-req', '-in', 'ca2.csr', '-CA', 'ca2.pem', '-CAkey', 'ca2.key', '-force_pubkey', 'ak.pub.pem', '-set_serial', '9', '-days', '30', '-extfile', 'ak.ext', '-outform', 'DER', '-out', 'ak.der');
    cloud.files.set('/pki/ca1.der', readFileSync(f('ca1.der')));
    cloud.files.set('/pki/ca2.der', readFileSync(f('ca2.der')));
    return { rootPem: readFileSync(f('root.pem'), 'utf8'), akDer: readFileSync(f('ak.der')) };
  }

  /** Provisions the swtpm like the clouds do: Azure AK persisted with its certificate in NV, the GCE AK template in NV, GCE events in PCR 0. */
  async function provision(): Promise<{ rootPem: string }> {
    const tools = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { env: { ...process.env, TPM2TOOLS_TCTI: tpm.tcti }, stdio: 'pipe' });
    const nvWrite = (index: number, data: Buffer) => {
      const hex = `0x${index.toString(16)}`;
      writeFileSync(f(`${hex}.bin`), data);
      tools('tpm2_nvdefine', hex, '-C', 'o', '-s', String(data.length), '-a', 'ownerread|ownerwrite|authread|authwrite');
      tools('tpm2_nvwrite', hex, '-C', 'o', '-i', f(`${hex}.bin`));
    };
    await tpm.disconnect();
    tools('tpm2_createprimary', '-C', 'o', '-G', 'rsa2048:rsassa-sha256:null', '-a', 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign', '-c', f('ak.ctx'));
    tools('tpm2_evictcontrol', '-C', 'o', '-c', f('ak.ctx'), '0x81000003');
    tools('tpm2_flushcontext', '-t');
    nvWrite(GCE_AK_TEMPLATE_NV_INDEX_RSA, encodePublic(akTemplateRsa()));
    const akPub = await (await tpm.client()).readPublic(0x81000003);
    await tpm.disconnect();
    const chain = azureChain(publicKeyObject(akPub.public).export({ type: 'spki', format: 'pem' }) as string);
    nvWrite(AZURE_AK_CERT_NV_INDEX, chain.akDer);
    nvWrite(GCE_AK_CERT_NV_INDEX_RSA, readFileSync(f('ca1.der')));
    await measureGceEvents(await tpm.client(), gceEventLog(GCE_TECHNOLOGY.AMD_SEV).events);
    return chain;
  }

  before(async () => {
    Object.assign(process.env, AWS_ENV);
    tpm = await startSwtpm();
    cloud = await startCloudReplay(TOKEN);
    const { rootPem } = await provision();
    moto = new MotoServer();
    await moto.start();
    const seeded = await seedMotoCluster(moto.url, 'cli-nitro');
    instance = { instanceId: 'i-0abc', region: seeded.region, availabilityZone: `${seeded.region}a`, privateIp: '10.0.0.5', imageId: seeded.imageId, hostname: 'worker-0', tags: {} };
    await (imds = awsImdsFake(instance)).start();
    const open = () => tpm.client();
    await serve('aws-nitro-tpm', new AwsNitroTpmIssuer(open, new ImdsIdentitySource(imds.url)));
    await serve('azure-trustedlaunch', new AzureTrustedLaunchIssuer(open, { fetchCertificate: httpCertificateFetcher() }), { akRootKey: rootPem });
    const gce = new GcpSevEsIssuer(open, new GceMetadataInstanceSource(cloud.base), async () => gceEventLog(GCE_TECHNOLOGY.AMD_SEV).log);
    // What the Compute API reports: the public key of the AK the template in NV makes.
    const sample = decodeDocument(await gce.issue(Buffer.from('probe'), Buffer.alloc(32)));
    akPem = publicKeyObject(decodePublic(sample.attestation!.akPub)).export({ type: 'spki', format: 'pem' }) as string;
    cloud.ekPub = akPem;
    await serve('gcp-sev-es', gce);
  });
  after(async () => {
    for (const s of Object.values(servers)) await s.stop();
    await imds?.stop();
    await moto?.stop();
    await cloud?.stop();
    await tpm?.stop();
    for (const k of Object.keys(AWS_ENV)) {
      if (savedEnv[k] === undefined) delete process.env[k];
      else process.env[k] = savedEnv[k];
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const args = (variant: string, ...extra: string[]) => [`--endpoint=${endpoint[variant]}`, `--variant=${variant}`, `--attestation-config=${configs[variant]}`, ...extra];

  it('aws-nitro-tpm: DescribeImages through the AWS SDK against moto; the AMI moto knows has no TpmSupport: refused (exit 1) with TPM_SUPPORT_MISSING', async () => {
    const r = await verify(args('aws-nitro-tpm', `--cloud-api-url=${moto.url}`));
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`is refused: AMI ${instance.imageId} does not support TPM v2\\.0 \\(TpmSupport null\\)`));
    assert.match(r.stdout, /PCR {2}STATUS/);
  });

  it('aws-nitro-tpm: an AMI EC2 does not know: refused, naming DescribeImages and the region', async () => {
    const known = instance.imageId;
    instance.imageId = 'ami-0000000000000dead';
    try {
      const r = await verify(args('aws-nitro-tpm', `--cloud-api-url=${moto.url}`));
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /is refused: EC2 DescribeImages for ami-0000000000000dead in eu-central-1: AWS DescribeImages: InvalidAMIID\.NotFound/);
    } finally {
      instance.imageId = known;
    }
  });

  it('aws-nitro-tpm: EC2 answering TpmSupport v2.0 (SigV4-signed request): accepted (exit 0)', async () => {
    const r = await verify(args('aws-nitro-tpm', `--cloud-api-url=${cloud.base}`));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /All enforced measurements match\.[\s\S]*is attested as aws-nitro-tpm: accepted/);
    const call = cloud.ec2Calls.at(-1)!;
    assert.match(call.body, new RegExp(`Action=DescribeImages.*ImageId\\.1=${instance.imageId}`));
    assert.match(call.authorization, /^AWS4-HMAC-SHA256 Credential=testing\/\d{8}\/eu-central-1\/ec2\/aws4_request/);
  });

  it('aws-nitro-tpm from the asterism process: credentials from the environment (the SDK default chain) reach moto', async () => {
    const r = await cliProcess(['verify', ...args('aws-nitro-tpm', `--cloud-api-url=${moto.url}`)], { ...process.env, ...AWS_ENV });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /does not support TPM v2\.0 \(TpmSupport null\)/);
  });

  it('azure-trustedlaunch: the CLI fetches the intermediate the document lacks from its CA Issuers URL: accepted (exit 0)', async () => {
    const before = cloud.seen.length;
    const r = await verify(args('azure-trustedlaunch'));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(cloud.seen.slice(before).includes('/pki/ca1.der'), `fetched: ${cloud.seen.slice(before).join(', ')}`);
  });

  it('azure-trustedlaunch without the fetcher (what the CLI built before): the chain stops below the root, CERT_CHAIN_INVALID', async () => {
    const att = unmarshalAttestationConfig(readFileSync(configs['azure-trustedlaunch']!), 'azure-trustedlaunch');
    const r = await verifyRunningNode(new GrpcAttestationSource(), validatorFor(att), { endpoint: endpoint['azure-trustedlaunch']!, timeoutMs: 10_000 });
    assert.equal(r.accepted, false);
    assert.equal(!r.attestation.ok && (r.attestation.error as { code?: string }).code, 'CERT_CHAIN_INVALID');
  });

  it('gcp-sev-es: the Compute API asked with the operator token (GOOGLE_OAUTH_ACCESS_TOKEN, --cloud-api-url): accepted (exit 0)', async () => {
    const r = await verify(args('gcp-sev-es', `--cloud-api-url=${cloud.base}`), { env: { GOOGLE_OAUTH_ACCESS_TOKEN: TOKEN } });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(cloud.seen.includes('/compute/v1/projects/asterism-test/zones/europe-west3-a/instances/worker-0/getShieldedInstanceIdentity'));
  });

  it('gcp-sev-es: a token the Compute API refuses: refused (exit 1), naming the API call', async () => {
    const r = await verify(args('gcp-sev-es', `--cloud-api-url=${cloud.base}`), { env: { GOOGLE_OAUTH_ACCESS_TOKEN: 'ya29.revoked' } });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /is refused: getShieldedInstanceIdentity for asterism-test\/europe-west3-a\/worker-0: getShieldedInstanceIdentity: HTTP 401/);
    assert.doesNotMatch(r.stdout + r.stderr, /ya29/);
  });

  it('gcp-sev-es from the asterism process without Google credentials: exit 2 naming what is missing, no node asked', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: mkdtempSync(join(dir, 'home-')) };
    delete env.GOOGLE_OAUTH_ACCESS_TOKEN;
    delete env.GOOGLE_APPLICATION_CREDENTIALS;
    const calls = servers['gcp-sev-es']!.calls();
    const r = await cliProcess(['verify', ...args('gcp-sev-es', `--cloud-api-url=${cloud.base}`)], env);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.equal(servers['gcp-sev-es']!.calls(), calls);
    assert.match(r.stderr, /asterism verify: gcp-sev-es: .*needs Google credentials: set GOOGLE_OAUTH_ACCESS_TOKEN .*GOOGLE_APPLICATION_CREDENTIALS/);
    assert.equal(r.stdout, '');
  });
});
