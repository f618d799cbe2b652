/**
 * The three cloud vTPM variants end to end on a REAL swtpm, provisioned with tpm2-tools like the
 * clouds provision their vTPMs (docs/protocol/cloud-vtpm-variants.md): the Azure AK persisted at
 * 0x81000003 with its certificate in NV 0x01C101D0, the GCE AK template in NV 0x01C10001, GCE
 * platform events measured into PCR 0. The cloud endpoints (CA download, IMDSv2, GCE metadata,
 * Compute API) are one local HTTP server replaying the documented shapes; EC2 DescribeImages is
 * the in-memory FakeEc2Images port. Each variant: issuer -> validator accepts, then named
 * refusal cases with their typed codes.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { generateKeyPairSync, type X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { missingComponent } from '@asterism/testing';
import { akTemplateRsa, decodePublic, encodePublic, publicKeyObject } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, tpm2ToolsAvailable, type Swtpm } from '@asterism/tpm/testing';
import { AwsNitroTpmIssuer, AwsNitroTpmValidator, type ImageTpmSupportLookup } from '../variants/aws-nitro-tpm.js';
import { ImdsIdentitySource } from '../aws/identity-document.js';
import { makeAkCert, makeCa, makeRoot, type Issued } from '../azure/ak-pki.fixture.js';
import { AZURE_AK_CERT_NV_INDEX, AzureTrustedLaunchIssuer, AzureTrustedLaunchValidator, decodeTrustedLaunchInstanceInfo, encodeTrustedLaunchInstanceInfo } from '../variants/azure-trustedlaunch.js';
import { AttestationError } from '../errors.js';
import { ComputeShieldedIdentitySource, GceMetadataInstanceSource, metadataAccessToken } from '../gcp/gce-identity.js';
import { gceEventLog, measureGceEvents } from '../gcp/platform-events.fixture.js';
import { GCE_TECHNOLOGY } from '../gcp/platform-state.js';
import { GCE_AK_CERT_NV_INDEX_RSA, GCE_AK_TEMPLATE_NV_INDEX_RSA, GcpSevEsIssuer, GcpSevEsValidator } from '../variants/gcp-sev-es.js';
import type { Validator } from '../interfaces.js';
import { AZURE_AK_HANDLE } from '../snp/hcl.js';
import { decodeDocument, encodeDocument } from '../vtpm/document.js';
import { httpCertificateFetcher } from './http.js';

const run = promisify(execFile);
const skip = !swtpmAvailable() ? missingComponent('swtpm', SWTPM_INSTALL_HINT) : !tpm2ToolsAvailable() ? missingComponent('tpm2-tools', SWTPM_INSTALL_HINT) : false;
const NONCE = Buffer.alloc(32, 7);
const USER_DATA = Buffer.from('tls key digest');
const NO_MEASUREMENTS = new Map();
const AMI = 'ami-0123456789abcdef0';
const DAY = 24 * 3600_000;

/** EC2 DescribeImages stand-in: TpmSupport per AMI id, or a failure. */
class FakeEc2Images implements ImageTpmSupportLookup {
  constructor(readonly images: Map<string, string | undefined>) {}
  calls: Array<[string, string]> = [];
  async tpmSupport(region: string, imageId: string): Promise<string | undefined> {
    this.calls.push([region, imageId]);
    if (!this.images.has(imageId)) throw new Error(`InvalidAMIID.NotFound: ${imageId}`);
    return this.images.get(imageId);
  }
}

/** The local "cloud": CA download, IMDSv2, GCE metadata server, Compute API. */
interface Cloud {
  server: Server;
  base: string;
  caDer: Buffer;
  ekPub: { status: number; pem: string };
}

function startCloud(): Promise<Cloud> {
  const cloud = { caDer: Buffer.alloc(0), ekPub: { status: 200, pem: '' } } as Cloud;
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, body: string | Buffer, type = 'text/plain') => res.writeHead(status, { 'content-type': type }).end(body);
    const url = req.url ?? '';
    if (url === '/pki/issuing.crt') return send(200, cloud.caDer, 'application/pkix-cert');
    if (url === '/latest/api/token' && req.method === 'PUT' && req.headers['x-aws-ec2-metadata-token-ttl-seconds']) return send(200, 'imds-session-token');
    if (url === '/latest/dynamic/instance-identity/document') {
      if (req.headers['x-aws-ec2-metadata-token'] !== 'imds-session-token') return send(401, '');
      const doc = { accountId: '123456789012', architecture: 'x86_64', availabilityZone: 'eu-central-1a', imageId: AMI, instanceId: 'i-0abc', instanceType: 'm6a.xlarge', pendingTime: '2026-11-23T10:00:00Z', privateIp: '10.0.0.5', region: 'eu-central-1', version: '2017-09-30', billingProducts: null, devpayProductCodes: null, marketplaceProductCodes: null, kernelId: null, ramdiskId: null };
      return send(200, JSON.stringify(doc), 'application/json');
    }
    if (url.startsWith('/computeMetadata/v1/')) {
      if (req.headers['metadata-flavor'] !== 'Google') return send(403, '');
      const answers: Record<string, string> = {
        'project/project-id': 'asterism-test',
        'instance/zone': 'projects/1234/zones/europe-west3-a',
        'instance/name': 'worker-0',
        'instance/service-accounts/default/token': JSON.stringify({ access_token: 'ya29.test', expires_in: 3599, token_type: 'Bearer' }),
      };
      const a = answers[url.slice('/computeMetadata/v1/'.length)];
      return a === undefined ? send(404, '') : send(200, a);
    }
    if (url === '/compute/v1/projects/asterism-test/zones/europe-west3-a/instances/worker-0/getShieldedInstanceIdentity') {
      if (req.headers.authorization !== 'Bearer ya29.test') return send(401, '');
      if (cloud.ekPub.status !== 200) return send(cloud.ekPub.status, '{"error":{"code":500}}', 'application/json');
      return send(200, JSON.stringify({ kind: 'compute#shieldedInstanceIdentity', signingKey: { ekPub: cloud.ekPub.pem }, encryptionKey: { ekPub: 'unused' } }), 'application/json');
    }
    send(404, '');
  };
  cloud.server = createServer(handle);
  return new Promise((resolve) =>
    cloud.server.listen(0, '127.0.0.1', () => {
      cloud.base = `http://127.0.0.1:${(cloud.server.address() as AddressInfo).port}`;
      resolve(cloud);
    }),
  );
}

const refused = (code: string) => (e: unknown) => {
  assert.ok(e instanceof AttestationError, `expected AttestationError, got ${String(e)}`);
  assert.equal(e.code, code, e.message);
  return true;
};

describe('cloud vTPM variants on swtpm', { skip }, () => {
  let tpm: Swtpm;
  let cloud: Cloud;
  let root: Issued;
  let ca: Issued;
  let akCert: X509Certificate;
  const tools = (cmd: string, args: string[]) => run(cmd, args, { env: { ...process.env, TPM2TOOLS_TCTI: tpm.tcti } });
  const file = (name: string) => join(tpm.dir, name);
  const open = () => tpm.client();

  async function nvWrite(index: number, data: Buffer): Promise<void> {
    const hex = `0x${index.toString(16)}`;
    writeFileSync(file(`${hex}.bin`), data);
    await tools('tpm2_nvdefine', [hex, '-C', 'o', '-s', String(data.length), '-a', 'ownerread|ownerwrite|authread|authwrite']);
    await tools('tpm2_nvwrite', [hex, '-C', 'o', '-i', file(`${hex}.bin`)]);
  }

  before(async () => {
    tpm = await startSwtpm();
    cloud = await startCloud();
    // Azure: an RSA restricted signing key persisted at 0x81000003; the GCE AK template in NV.
    await tpm.disconnect();
    await tools('tpm2_createprimary', ['-C', 'o', '-G', 'rsa2048:rsassa-sha256:null', '-a', 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign', '-c', file('ak.ctx')]);
    await tools('tpm2_evictcontrol', ['-C', 'o', '-c', file('ak.ctx'), `0x${AZURE_AK_HANDLE.toString(16)}`]);
    await tools('tpm2_flushcontext', ['-t']);
    await nvWrite(GCE_AK_TEMPLATE_NV_INDEX_RSA, encodePublic(akTemplateRsa()));
    // The Azure AK certificate for the persisted key, issued by a CA served at the AIA URL.
    const akPub = await (await tpm.client()).readPublic(AZURE_AK_HANDLE);
    root = await makeRoot('test vTPM root');
    ca = await makeCa('test vTPM CA', root);
    cloud.caDer = ca.der;
    akCert = await makeAkCert(publicKeyObject(akPub.public).export({ type: 'spki', format: 'der' }) as Buffer, ca, [`${cloud.base}/pki/missing.crt`, `${cloud.base}/pki/issuing.crt`]);
    await tpm.disconnect();
    await nvWrite(AZURE_AK_CERT_NV_INDEX, akCert.raw);
    // GCE: a certificate in the AK certificate index (any DER; the issuer copies it into ak_cert).
    await nvWrite(GCE_AK_CERT_NV_INDEX_RSA, ca.der);
    // GCE: the platform events in PCR 0 (firmware v2, AMD SEV).
    const { events } = gceEventLog(GCE_TECHNOLOGY.AMD_SEV);
    await measureGceEvents(await tpm.client(), events);
  });
  after(async () => {
    await tpm?.stop();
    cloud?.server.close();
  });

  describe('azure-trustedlaunch', () => {
    let doc: Buffer;
    before(async () => {
      doc = Buffer.from(await new AzureTrustedLaunchIssuer(open, { fetchCertificate: httpCertificateFetcher() }).issue(USER_DATA, NONCE));
    });

    it('issuer ships the NV AK certificate and the CA from its second CA Issuers URL; the validator accepts', async () => {
      const info = decodeTrustedLaunchInstanceInfo(decodeDocument(doc).instanceInfo);
      assert.deepEqual(info.akCert, akCert.raw);
      assert.deepEqual(info.ca, ca.der);
      const v = new AzureTrustedLaunchValidator({ measurements: NO_MEASUREMENTS, roots: [root.node] });
      assert.deepEqual(Buffer.from(await v.validate(doc, NONCE)), USER_DATA);
    });

    const otherKeyCert = async () => makeAkCert(generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'der' }), ca, []);
    const cases: Array<[string, () => Promise<{ validator: Validator; document?: Buffer }>, string]> = [
      ['wrong root', async () => ({ validator: new AzureTrustedLaunchValidator({ measurements: NO_MEASUREMENTS, roots: [(await makeRoot('test vTPM root')).node] }) }), 'CERT_CHAIN_INVALID'],
      ['the embedded default root (Microsoft 2023) does not vouch for a test CA', async () => ({ validator: new AzureTrustedLaunchValidator({ measurements: NO_MEASUREMENTS }) }), 'CERT_CHAIN_INVALID'],
      [
        'root out of date at verification time',
        async () => ({ validator: new AzureTrustedLaunchValidator({ measurements: NO_MEASUREMENTS, roots: [root.node], clock: () => new Date(Date.now() + 400 * DAY) }) }),
        'ROOT_EXPIRED',
      ],
      [
        'AK certificate of another key (AK mismatch)',
        async () => {
          const d = decodeDocument(doc);
          d.instanceInfo = encodeTrustedLaunchInstanceInfo({ akCert: (await otherKeyCert()).raw, ca: ca.der });
          return { validator: new AzureTrustedLaunchValidator({ measurements: NO_MEASUREMENTS, roots: [root.node] }), document: encodeDocument(d) };
        },
        'AK_MISMATCH',
      ],
      ['wrong nonce', async () => ({ validator: new AzureTrustedLaunchValidator({ measurements: NO_MEASUREMENTS, roots: [root.node] }), document: doc }), 'NONCE_MISMATCH'],
    ];
    for (const [name, make, code] of cases) {
      it(`refuses: ${name} (${code})`, async () => {
        const { validator, document } = await make();
        const nonce = name === 'wrong nonce' ? Buffer.alloc(32, 8) : NONCE;
        await assert.rejects(validator.validate(document ?? doc, nonce), refused(code));
      });
    }
  });

  describe('aws-nitro-tpm', () => {
    let doc: Buffer;
    before(async () => {
      doc = Buffer.from(await new AwsNitroTpmIssuer(open, new ImdsIdentitySource(cloud.base)).issue(USER_DATA, NONCE));
    });

    it('issuer sends the IMDSv2 identity document; the validator checks the AMI in its region and accepts', async () => {
      const info = JSON.parse(decodeDocument(doc).instanceInfo!.toString()) as Record<string, unknown>;
      assert.deepEqual(Object.keys(info).slice(0, 3), ['devpayProductCodes', 'marketplaceProductCodes', 'availabilityZone']);
      assert.equal(info.imageId, AMI);
      const images = new FakeEc2Images(new Map([[AMI, 'v2.0']]));
      assert.deepEqual(Buffer.from(await new AwsNitroTpmValidator({ measurements: NO_MEASUREMENTS, images }).validate(doc, NONCE)), USER_DATA);
      assert.deepEqual(images.calls, [['eu-central-1', AMI]]);
    });

    const cases: Array<[string, Map<string, string | undefined>, string]> = [
      ['AMI without TpmSupport', new Map([[AMI, undefined]]), 'TPM_SUPPORT_MISSING'],
      ['AMI with TpmSupport v1.0', new Map([[AMI, 'v1.0']]), 'TPM_SUPPORT_MISSING'],
      ['DescribeImages fails', new Map(), 'CLOUD_API_FAILED'],
    ];
    for (const [name, images, code] of cases) {
      it(`refuses: ${name} (${code})`, async () => {
        await assert.rejects(new AwsNitroTpmValidator({ measurements: NO_MEASUREMENTS, images: new FakeEc2Images(images) }).validate(doc, NONCE), refused(code));
      });
    }

    it('the issuer says where it looked when IMDS is absent', async () => {
      await assert.rejects(new AwsNitroTpmIssuer(open, new ImdsIdentitySource('http://127.0.0.1:9')).issue(USER_DATA, NONCE), /not on AWS: IMDS not reachable at http:\/\/127\.0\.0\.1:9/);
    });
  });

  describe('gcp-sev-es', () => {
    let doc: Buffer;
    let akPem: string;
    const { log } = gceEventLog(GCE_TECHNOLOGY.AMD_SEV);
    const validator = () => new GcpSevEsValidator({ measurements: NO_MEASUREMENTS, identity: new ComputeShieldedIdentitySource(metadataAccessToken(cloud.base), `${cloud.base}/compute/v1`) });
    const issue = (eventLog?: Buffer) => new GcpSevEsIssuer(open, new GceMetadataInstanceSource(cloud.base), eventLog ? async () => eventLog : undefined).issue(USER_DATA, NONCE);
    before(async () => {
      doc = Buffer.from(await issue(log));
      // What the Compute API reports: the public key of the AK made from the NV template.
      akPem = publicKeyObject(decodePublic(decodeDocument(doc).attestation!.akPub)).export({ type: 'spki', format: 'pem' }) as string;
      cloud.ekPub = { status: 200, pem: akPem };
    });

    it('issuer: AK from the NV template (endorsement hierarchy), names from the metadata server; validator accepts', async () => {
      assert.deepEqual(JSON.parse(decodeDocument(doc).instanceInfo!.toString()), { zone: 'europe-west3-a', project_id: 'asterism-test', instance_name: 'worker-0' });
      assert.deepEqual(decodeDocument(doc).attestation!.akCert, ca.der, 'ak_cert is the certificate from NV 0x01C10000');
      assert.deepEqual(Buffer.from(await validator().validate(doc, NONCE)), USER_DATA);
    });

    const tamperedLog = Buffer.from(log);
    tamperedLog[tamperedLog.length - 16] = GCE_TECHNOLOGY.AMD_SEV_ES;
    const cases: Array<[string, () => Promise<Buffer>, { status: number; pem: () => string }, string]> = [
      ['Compute API reports another key', async () => doc, { status: 200, pem: () => generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }) as string }, 'AK_MISMATCH'],
      ['signing key is not a PEM PUBLIC KEY', async () => doc, { status: 200, pem: () => 'not a key' }, 'AK_UNTRUSTED'],
      ['Compute API error', async () => doc, { status: 500, pem: () => akPem }, 'CLOUD_API_FAILED'],
      ['no event log: platform state unknown', async () => Buffer.from(await issue()), { status: 200, pem: () => akPem }, 'PLATFORM_CHECK_FAILED'],
      // The digests still replay to PCR 0; the altered data no longer matches its digest.
      ['event log data claims SEV-ES but PCR 0 measured SEV', async () => Buffer.from(await issue(tamperedLog)), { status: 200, pem: () => akPem }, 'PLATFORM_CHECK_FAILED'],
    ];
    for (const [name, document, api, code] of cases) {
      it(`refuses: ${name} (${code})`, async () => {
        const d = await document();
        cloud.ekPub = { status: api.status, pem: api.pem() };
        try {
          await assert.rejects(validator().validate(d, NONCE), refused(code));
        } finally {
          cloud.ekPub = { status: 200, pem: akPem };
        }
      });
    }

    it('refuses: measured technology AMD_SEV_ES (PLATFORM_CHECK_FAILED), after a reboot re-measured PCR 0', async () => {
      await tpm.reboot();
      const sevEs = gceEventLog(GCE_TECHNOLOGY.AMD_SEV_ES);
      await measureGceEvents(await tpm.client(), sevEs.events);
      await assert.rejects(validator().validate(await issue(sevEs.log), NONCE), refused('PLATFORM_CHECK_FAILED'));
    });
  });
});
