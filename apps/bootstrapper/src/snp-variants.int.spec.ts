/**
 * The bootstrapper process started with the SEV-SNP variants, the way a user runs it: its init.API
 * attests with the variant's issuer over the node's interfaces where the flags put them.
 * azure-sev-snp: a swtpm holding the real Azure HCL report in NV 0x01400001 and an AK persisted at
 * 0x81000003 (tpm2-tools), THIM on a local server named by --metadata; an aTLS client receives the
 * document and finds the real report and the THIM VCEK in it. aws-sev-snp: configfs-tsm is looked
 * for under --state-root (the refusal names the paths there). configfs-tsm replay through the
 * issuers: attestation/snp-issuers.int.spec.ts (in process: a directory cannot answer a write in
 * another process the way the kernel does).
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { AZURE_AK_HANDLE, AZURE_HCL_REPORT_NV_INDEX, CONFIGFS_TSM_REPORT_DIR, decodeDocument, decodeSnpInstanceInfo, encodeHclReport, REPORT_SIZE, Variant, type Validator } from '@asterism/attestation';
import { atlsChannelCredentials } from '@asterism/atls';
import { init } from '@asterism/proto';
import { ClusterLayout, createHostKey, createStateDisk } from '@asterism/local-cluster';
import { missingComponent, startTsProcess, WORKSPACE_ROOT, type ServiceProcess } from '@asterism/testing';
import { startSwtpm, swtpmAvailable, tpm2ToolsAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';

const missing = ['cryptsetup', 'ssh-keygen'].filter((t) => spawnSync('which', [t]).status !== 0);
const skip =
  swtpmAvailable() && tpm2ToolsAvailable() ? (missing.length ? missingComponent(missing.join(', '), 'bash tools/scripts/setup.sh') : false) : missingComponent('swtpm + tpm2-tools', SWTPM_INSTALL_HINT);
const run = promisify(execFile);
const testdata = (p: string) => readFileSync(join(WORKSPACE_ROOT, 'testdata', p));

const roots: string[] = [];
/**
 * The bootstrapper's stages as a process that leaves the host alone: the local cluster's simulated
 * node (no kubeadm, no systemctl; docs/adr/0036-node-runtime.md). The issuers under test are the
 * bootstrapper's own.
 */
const SIMULATED_NODE = 'tools/simulated-node/src/main.ts';
const processes: ServiceProcess[] = [];
after(async () => {
  for (const p of processes) await p.stop();
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function tempRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'bootstrapper-snp-'));
  roots.push(root);
  return root;
}

/** A node as the bootstrapper expects it (LUKS2 state disk image, SSH host key) under a fresh root; returns its flags. */
async function node(name = 'snp-node'): Promise<{ root: string; flags: string[] }> {
  const layout = new ClusterLayout(tempRoot());
  await mkdir(layout.nodeRoot(name), { recursive: true });
  await createStateDisk(layout, name);
  await createHostKey(layout, name);
  return { root: layout.nodeRoot(name), flags: [`--state-disk=${layout.diskImage(name)}`, `--initial-key=${layout.diskKey(name)}`] };
}

async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

function start(variant: string, root: string, initPort: number, extra: string[]): ServiceProcess {
  // init.API serves while the join client retries against a joinservice that does not exist.
  const p = startTsProcess(SIMULATED_NODE, [
    `--attestation-variant=${variant}`,
    `--state-root=${root}`,
    '--k8s-backend=local',
    '--init-host=127.0.0.1',
    `--init-port=${initPort}`,
    '--recovery-port=0',
    '--verify-grpc-port=0',
    '--verify-http-port=0',
    '-v=-1',
    ...extra,
  ]);
  processes.push(p);
  return p;
}

/** Connects to init.API with aTLS (until `giveUp` says so); the validator keeps the node's document and refuses it. */
async function attestationDocument(variant: string, port: number, giveUp: () => boolean = () => false): Promise<Uint8Array | undefined> {
  let document: Uint8Array | undefined;
  const recorder: Validator = {
    variant: Variant.fromString(variant),
    validate: async (doc) => {
      document = doc;
      throw new Error('recorded');
    },
  };
  const client = new init.APIClient(`127.0.0.1:${port}`, atlsChannelCredentials({ validators: [recorder] }));
  const deadline = Date.now() + 30_000;
  while (!document && !giveUp() && Date.now() < deadline) await new Promise<void>((r) => client.waitForReady(Math.min(deadline, Date.now() + 1000), () => r()));
  client.close();
  return document;
}

/** A bcrypt hash nobody needs to match: init.API attests before it reads any secret. */
const INIT_SECRET_HASH = '$2a$10$abcdefghijklmnopqrstuuFz1Ck9qPqHaCMzHbvdmmUPi2ZWHh5wG';

/** The Azure IMDS instance document of the test VM (the fields the metadata provider reads). */
const AZURE_INSTANCE = {
  compute: {
    name: 'snp-node',
    resourceId: '/subscriptions/0/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/snp-node',
    subscriptionId: '0',
    resourceGroupName: 'rg',
    tagsList: [{ name: 'constellation-init-secret-hash', value: INIT_SECRET_HASH }],
  },
  network: { interface: [{ ipv4: { ipAddress: [{ privateIpAddress: '10.0.0.5' }] } }] },
};

/** tpm2-tools against swtpm (its single connection must be free). */
async function tool(tpm: Swtpm, cmd: string, args: string[]): Promise<void> {
  await tpm.disconnect();
  await run(cmd, args, { env: { ...process.env, TPM2TOOLS_TCTI: tpm.tcti } });
}

describe('bootstrapper process with azure-sev-snp: HCL report from the vTPM, VCEK from THIM at --metadata', { skip }, () => {
  let tpm: Swtpm;
  let thim: Server;
  let thimUrl = '';
  const thimRequests: string[] = [];
  const attestation = testdata('snp/attestation.bin');
  const report = attestation.subarray(0, REPORT_SIZE);
  const vcekPem = testdata('snp/vcek.pem').toString('utf8');

  before(async () => {
    tpm = await startSwtpm();
    const dir = tempRoot();
    // The HCL report as Azure writes it: HCL header, the real SNP report + IGVM request header, the real runtime data.
    const runtimeData = testdata('snp/runtimedata.bin');
    const hcl = Buffer.concat([encodeHclReport(report, runtimeData).subarray(0, 32), attestation, runtimeData]);
    writeFileSync(join(dir, 'hcl.bin'), hcl);
    const nv = `0x${AZURE_HCL_REPORT_NV_INDEX.toString(16)}`;
    await tool(tpm, 'tpm2_nvdefine', [nv, '-C', 'o', '-s', String(hcl.length), '-a', 'ownerread|ownerwrite|authread|authwrite']);
    await tool(tpm, 'tpm2_nvwrite', [nv, '-C', 'o', '-i', join(dir, 'hcl.bin')]);
    await tool(tpm, 'tpm2_createprimary', ['-C', 'o', '-G', 'rsa2048:rsassa-sha256:null', '-a', 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign', '-c', join(dir, 'ak.ctx')]);
    await tool(tpm, 'tpm2_evictcontrol', ['-C', 'o', '-c', join(dir, 'ak.ctx'), `0x${AZURE_AK_HANDLE.toString(16)}`]);
    await tool(tpm, 'tpm2_flushcontext', ['-t']);
    // The instance metadata service: THIM, and the instance document the init server reads its init secret hash from.
    const answers: Record<string, unknown> = {
      '/metadata/THIM/amd/certification': { vcekCert: vcekPem, certificateChain: testdata('snp/certchain.pem').toString('utf8') },
      '/metadata/instance?api-version=2021-02-01': AZURE_INSTANCE,
    };
    thim = createServer((req, res) => {
      thimRequests.push(req.url ?? '');
      const answer = req.headers.metadata === 'true' ? answers[req.url ?? ''] : undefined;
      if (answer === undefined) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
    await new Promise<void>((r) => thim.listen(0, '127.0.0.1', r));
    thimUrl = `http://127.0.0.1:${(thim.address() as AddressInfo).port}`;
  });
  after(async () => {
    await tpm?.stop();
    thim?.close();
  });

  it('starts fresh, serves init.API and attests with the real report and the VCEK THIM served', async () => {
    const port = await freePort();
    const n = await node();
    const p = start('azure-sev-snp', n.root, port, ['--csp=Azure', `--metadata=${thimUrl}/`, `--cloud-api-url=${thimUrl}`, `--tpm=unix:${tpm.socketPath}`, ...n.flags]);
    assert.equal((await p.waitForLog((l) => l.msg === 'node condition', 60_000)).condition, 'fresh');
    const raw = await attestationDocument('azure-sev-snp', port);
    assert.ok(raw, `no attestation document from init.API; bootstrapper log:\n${p.allOutput().slice(-2000)}`);
    const info = decodeSnpInstanceInfo(decodeDocument(raw).instanceInfo);
    assert.deepEqual(info.attestationReport, report);
    assert.equal(info.reportSigner.toString('utf8'), vcekPem);
    assert.ok(thimRequests.includes('/metadata/THIM/amd/certification'), 'THIM asked at --metadata');
    await p.stop();
  });
});

describe('bootstrapper process with aws-sev-snp: configfs-tsm under --state-root', { skip }, () => {
  it('a node root without configfs-tsm: init.API refuses to attest, naming the paths under the root', async () => {
    const tpm = await startSwtpm();
    try {
      await tpm.disconnect();
      const { root, flags } = await node();
      writeFileSync(join(root, 'metadata.json'), JSON.stringify({ instances: [{ Name: 'snp-node', Role: 'ControlPlane', VPCIP: '127.0.0.1' }], loadBalancer: { host: '127.0.0.1', port: '6443' }, initSecretHash: INIT_SECRET_HASH }));
      const port = await freePort();
      const p = start('aws-sev-snp', root, port, [`--metadata=file:${join(root, 'metadata.json')}`, '--node-name=snp-node', `--tpm=unix:${tpm.socketPath}`, ...flags]);
      assert.equal((await p.waitForLog((l) => l.msg === 'node condition', 60_000)).condition, 'fresh');
      const refusedSeen = () => p.jsonLogs().some((l) => l.msg === 'refused aTLS handshake');
      assert.equal(await attestationDocument('aws-sev-snp', port, refusedSeen), undefined);
      const refused = await p.waitForLog((l) => l.msg === 'refused aTLS handshake', 10_000);
      assert.equal(refused.code, 'ISSUER_FAILED');
      assert.ok(String(refused.reason).includes(`${root}${CONFIGFS_TSM_REPORT_DIR} (configfs-tsm) does not exist and there is no ${root}/dev/sev-guest`), String(refused.reason));
      await p.stop();
    } finally {
      await tpm.stop();
    }
  });
});
