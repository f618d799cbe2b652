import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { resolve } from 'node:path';
import { WORKSPACE_ROOT } from '@asterism/testing';
import { AttestationError } from './errors.js';
import { Variant } from './variants/table.js';
import { defaultAttestationConfig, encodeAttestationConfig, unmarshalAttestationConfig } from './attestation-config.js';
import { certificateToPem } from './config/certificate.js';
import { ARK_GENOA_PEM, ARK_MILAN_PEM, ARK_TURIN_PEM, INTEL_SGX_ROOT_CA_PEM } from './config/roots.js';
import type { AzureSevSnpConfig, AzureTdxConfig, MeasurementsOnlyConfig, SevSnpConfig } from './config/types.js';

const Z = '00'.repeat(32);
const M = `{"15":{"expected":"${Z}","warnOnly":false},"4":{"expected":"${'12'.repeat(32)}","warnOnly":true}}`;
const ARK = JSON.stringify(ARK_MILAN_PEM);
const DIGEST = '0356215882a825279a85b300b0b742931d113bf7e32dde2e50ffde7ec743ca491ecdd7f336dc28a6e0b2bb57af7a44a3';
const invalid = (msg: string) => (e: unknown) => e instanceof AttestationError && e.code === 'CONFIG_INVALID' && e.message.includes(msg);

describe('attestation config: canonical Go JSON round-trips byte-identically', () => {
  const cases: Array<[string, string]> = [
    ['qemu-vtpm', `{"measurements":${M}}`],
    ['aws-nitro-tpm', `{"measurements":${M}}`],
    ['azure-trustedlaunch', `{"measurements":{}}`],
    // Our extension (docs/protocol/cloud-vtpm-variants.md §2.3): the configured AK root.
    ['azure-trustedlaunch', `{"measurements":${M},"akRootKey":${ARK}}`],
    ['gcp-sev-es', `{"measurements":${M}}`],
    ['qemu-tdx', `{"measurements":{"0":{"expected":"${'ab'.repeat(48)}","warnOnly":false}}}`],
    ['dummy', '{}'],
    ['dummy', `{"measurements":${M}}`],
    ['aws-sev-snp', `{"measurements":${M},"bootloaderVersion":3,"teeVersion":0,"snpVersion":"latest","microcodeVersion":255,"amdRootKey":${ARK},"amdSigningKey":""}`],
    ['gcp-sev-snp', `{"measurements":${M},"bootloaderVersion":"latest","teeVersion":"latest","snpVersion":"latest","microcodeVersion":"latest","amdRootKey":"","amdSigningKey":${ARK}}`],
    [
      'azure-sev-snp',
      `{"measurements":${M},"bootloaderVersion":2,"teeVersion":0,"snpVersion":6,"microcodeVersion":93,"firmwareSignerConfig":{"acceptedKeyDigests":["${DIGEST}"],"enforcementPolicy":"MAAFallback","maaURL":"https://x.example/?a=1\\u0026b=2"},"amdRootKey":${ARK},"amdSigningKey":""}`,
    ],
    ['azure-sev-snp', `{"measurements":{},"bootloaderVersion":0,"teeVersion":0,"snpVersion":0,"microcodeVersion":0,"firmwareSignerConfig":{"acceptedKeyDigests":[],"enforcementPolicy":"Equal"},"amdRootKey":"","amdSigningKey":""}`],
    [
      'azure-tdx',
      `{"measurements":${M},"qeSVN":2,"pceSVN":"latest","teeTCBSVN":"02010600000000000000000000000000","qeVendorID":"939a7233f79c4ca9940a0db3957f0607","mrSeam":"${'36'.repeat(48)}","xfam":"e718060000000000","intelRootKey":${JSON.stringify(INTEL_SGX_ROOT_CA_PEM)}}`,
    ],
    ['azure-tdx', `{"measurements":${M},"qeSVN":"latest","pceSVN":0,"teeTCBSVN":"latest","qeVendorID":"latest","xfam":"latest","intelRootKey":""}`],
  ];
  for (const [variant, json] of cases) {
    it(`${variant}: ${json.slice(0, 60)}…`, () => {
      const cfg = unmarshalAttestationConfig(json, variant);
      assert.equal(cfg.variant, variant);
      assert.equal(encodeAttestationConfig(cfg), json);
    });
  }
});

describe('attestation config: decoding', () => {
  it('accepts a Variant object and bytes', () => {
    assert.equal(unmarshalAttestationConfig(Buffer.from(`{"measurements":${M}}`), Variant.fromString('qemu-vtpm')).measurements.size, 2);
  });

  it('matches keys case-insensitively and ignores unknown keys', () => {
    const cfg = unmarshalAttestationConfig(
      `{"Measurements":${M},"BOOTLOADERVERSION":1,"teeversion":2,"SnpVersion":"LATEST","microCodeVersion":"Latest","amdrootkey":${ARK},"extra":true}`,
      'aws-sev-snp',
    ) as SevSnpConfig;
    assert.deepEqual([cfg.bootloaderVersion, cfg.teeVersion], [
      { value: 1, wantLatest: false },
      { value: 2, wantLatest: false },
    ]);
    assert.deepEqual(cfg.snpVersion, { value: 0, wantLatest: true });
    assert.deepEqual(cfg.microcodeVersion, { value: 0, wantLatest: true });
    assert.ok(cfg.amdRootKey?.equals(new X509Certificate(ARK_MILAN_PEM).raw));
    assert.equal(cfg.amdSigningKey, null);
    assert.ok(encodeAttestationConfig(cfg).includes('"snpVersion":"latest","microcodeVersion":"latest"'));
  });

  it('accepts legacy policy booleans and a single digest string', () => {
    const json = `{"measurements":{},"bootloaderVersion":0,"teeVersion":0,"snpVersion":0,"microcodeVersion":0,"firmwareSignerConfig":{"acceptedKeyDigests":"${DIGEST}","enforcementPolicy":false}}`;
    const cfg = unmarshalAttestationConfig(json, 'azure-sev-snp') as AzureSevSnpConfig;
    assert.equal(cfg.firmwareSignerConfig.enforcementPolicy, 'WarnOnly');
    assert.deepEqual(
      cfg.firmwareSignerConfig.acceptedKeyDigests.map((d) => d.toString('hex')),
      [DIGEST],
    );
  });

  it('azure-trustedlaunch: akRootKey "" or absent is the default root; junk is CONFIG_INVALID naming the field', () => {
    assert.equal((unmarshalAttestationConfig(`{"measurements":${M},"akRootKey":""}`, 'azure-trustedlaunch') as MeasurementsOnlyConfig).akRootKey ?? null, null);
    assert.equal((unmarshalAttestationConfig(`{"measurements":${M}}`, 'azure-trustedlaunch') as MeasurementsOnlyConfig).akRootKey ?? null, null);
    assert.throws(() => unmarshalAttestationConfig(`{"measurements":${M},"akRootKey":"junk"}`, 'azure-trustedlaunch'), invalid('akRootKey'));
  });

  it('dummy may omit measurements', () => assert.equal(unmarshalAttestationConfig('{}', 'dummy').measurements.size, 0));

  it('unknown variant', () => {
    for (const v of ['azure-trusted-launch', 'QEMU-VTPM', '']) {
      assert.throws(
        () => unmarshalAttestationConfig('{}', v),
        (e: unknown) => e instanceof AttestationError && e.code === 'VARIANT_UNKNOWN' && e.message === `unknown variant: ${v}`,
      );
    }
  });

  const SNP_OK = `"bootloaderVersion":0,"teeVersion":0,"snpVersion":0,"microcodeVersion":0`;
  const TDX_OK = `"qeSVN":0,"pceSVN":0,"teeTCBSVN":"latest","qeVendorID":"latest","xfam":"latest"`;
  const bad: Array<[string, string, string, string]> = [
    ['syntax error', 'qemu-vtpm', '{"measurements":', 'invalid attestation config for qemu-vtpm'],
    ['array document', 'qemu-vtpm', '[]', 'field (document): expected an object, got array'],
    ['null document', 'qemu-vtpm', 'null', 'field (document): expected an object, got null'],
    ['missing measurements', 'qemu-vtpm', '{}', 'field measurements: missing'],
    ['null measurements', 'gcp-sev-es', '{"measurements":null}', 'field measurements: must not be null'],
    ['bad measurement', 'qemu-vtpm', '{"measurements":{"4":"0102"}}', 'field measurements: index 4: invalid measurement: invalid length: 2'],
    ['inconsistent lengths', 'qemu-tdx', `{"measurements":{"0":"${'00'.repeat(48)}","1":"${Z}"}}`, 'inconsistent measurement length'],
    ['version too large', 'aws-sev-snp', `{"measurements":{},"bootloaderVersion":256,"teeVersion":0,"snpVersion":0,"microcodeVersion":0}`, 'field bootloaderVersion: expected an integer between 0 and 255, got 256'],
    ['negative version', 'aws-sev-snp', `{"measurements":{},"bootloaderVersion":0,"teeVersion":-1,"snpVersion":0,"microcodeVersion":0}`, 'field teeVersion'],
    ['fractional version', 'gcp-sev-snp', `{"measurements":{},"bootloaderVersion":0,"teeVersion":0,"snpVersion":1.5,"microcodeVersion":0}`, 'field snpVersion'],
    ['version word', 'gcp-sev-snp', `{"measurements":{},"bootloaderVersion":0,"teeVersion":0,"snpVersion":0,"microcodeVersion":"newest"}`, 'field microcodeVersion: invalid version "newest"'],
    ['missing version', 'aws-sev-snp', `{"measurements":{},"bootloaderVersion":0,"teeVersion":0,"snpVersion":0}`, 'field microcodeVersion: missing'],
    ['null version', 'aws-sev-snp', `{"measurements":{},"bootloaderVersion":null,"teeVersion":0,"snpVersion":0,"microcodeVersion":0}`, 'field bootloaderVersion: must not be null'],
    ['PEM garbage', 'aws-sev-snp', `{"measurements":{},${SNP_OK},"amdRootKey":"not a pem"}`, 'field amdRootKey: invalid PEM certificate: no PEM block found'],
    ['PEM wrong type', 'aws-sev-snp', `{"measurements":{},${SNP_OK},"amdRootKey":"-----BEGIN PUBLIC KEY-----\\nAAAA\\n-----END PUBLIC KEY-----\\n"}`, 'PEM block type is "PUBLIC KEY"'],
    ['PEM not a cert', 'aws-sev-snp', `{"measurements":{},${SNP_OK},"amdSigningKey":"-----BEGIN CERTIFICATE-----\\nAAAA\\n-----END CERTIFICATE-----\\n"}`, 'field amdSigningKey: invalid PEM certificate: not an X.509 certificate'],
    ['PEM bad base64', 'aws-sev-snp', `{"measurements":{},${SNP_OK},"amdRootKey":"-----BEGIN CERTIFICATE-----\\nA!A\\n-----END CERTIFICATE-----\\n"}`, 'PEM body is not valid base64'],
    ['cert not a string', 'aws-sev-snp', `{"measurements":{},${SNP_OK},"amdRootKey":5}`, 'field amdRootKey: expected a string, got number'],
    ['missing firmwareSignerConfig', 'azure-sev-snp', `{"measurements":{},${SNP_OK}}`, 'field firmwareSignerConfig: missing'],
    ['firmwareSignerConfig not an object', 'azure-sev-snp', `{"measurements":{},${SNP_OK},"firmwareSignerConfig":[]}`, 'field firmwareSignerConfig: expected an object, got array'],
    ['bad policy', 'azure-sev-snp', `{"measurements":{},${SNP_OK},"firmwareSignerConfig":{"enforcementPolicy":"strict"}}`, 'field firmwareSignerConfig.enforcementPolicy: unknown enforcement policy "strict"'],
    ['bad digest', 'azure-sev-snp', `{"measurements":{},${SNP_OK},"firmwareSignerConfig":{"acceptedKeyDigests":["0102"],"enforcementPolicy":"Equal"}}`, 'field firmwareSignerConfig.acceptedKeyDigests[0]: invalid digest length: 4'],
    ['qeSVN too large', 'azure-tdx', `{"measurements":{},"qeSVN":70000,"pceSVN":0,"teeTCBSVN":"latest","qeVendorID":"latest","xfam":"latest"}`, 'field qeSVN: expected an integer between 0 and 65535'],
    ['teeTCBSVN wrong length', 'azure-tdx', `{"measurements":{},"qeSVN":0,"pceSVN":0,"teeTCBSVN":"0201","qeVendorID":"latest","xfam":"latest"}`, 'field teeTCBSVN: expected 16 bytes, got 2'],
    ['xfam not hex', 'azure-tdx', `{"measurements":{},"qeSVN":0,"pceSVN":0,"teeTCBSVN":"latest","qeVendorID":"latest","xfam":"e7180600000000zz"}`, 'field xfam: invalid hex'],
    ['xfam number', 'azure-tdx', `{"measurements":{},"qeSVN":0,"pceSVN":0,"teeTCBSVN":"latest","qeVendorID":"latest","xfam":5}`, 'field xfam: expected a hex string or "latest", got number'],
    ['mrSeam wrong length', 'azure-tdx', `{"measurements":{},${TDX_OK},"mrSeam":"00"}`, 'field mrSeam: expected 48 bytes, got 1'],
    ['missing qeVendorID', 'azure-tdx', `{"measurements":{},"qeSVN":0,"pceSVN":0,"teeTCBSVN":"latest","xfam":"latest"}`, 'field qeVendorID: missing'],
  ];
  for (const [name, variant, json, msg] of bad) {
    it(`rejects ${name}`, () => {
      assert.throws(
        () => unmarshalAttestationConfig(json, variant),
        (e: unknown) => invalid(msg)(e) && (e as AttestationError).details.variant === variant,
      );
    });
  }

  it('details name the field', () => {
    assert.throws(
      () => unmarshalAttestationConfig(`{"measurements":{},"bootloaderVersion":300,"teeVersion":0,"snpVersion":0,"microcodeVersion":0}`, 'aws-sev-snp'),
      (e: unknown) => e instanceof AttestationError && e.details.field === 'bootloaderVersion' && typeof e.details.reason === 'string',
    );
  });
});

describe('attestation config: defaults', () => {
  for (const name of Variant.all().map(String)) {
    it(`${name}: default round-trips`, () => {
      const cfg = defaultAttestationConfig(name);
      assert.equal(cfg.variant, name);
      const json = encodeAttestationConfig(cfg);
      assert.equal(encodeAttestationConfig(unmarshalAttestationConfig(json, name)), json);
    });
  }

  it('SEV-SNP: latest placeholders and the ARK-Milan root from testdata', () => {
    const arkPem = readFileSync(resolve(WORKSPACE_ROOT, 'testdata/amd/milan-ark.pem'), 'utf8');
    for (const name of ['aws-sev-snp', 'gcp-sev-snp', 'azure-sev-snp'] as const) {
      const cfg = defaultAttestationConfig(name) as SevSnpConfig | AzureSevSnpConfig;
      for (const v of [cfg.bootloaderVersion, cfg.teeVersion, cfg.snpVersion, cfg.microcodeVersion]) assert.deepEqual(v, { value: 0, wantLatest: true });
      assert.equal(certificateToPem(cfg.amdRootKey!), arkPem);
      assert.equal(cfg.amdSigningKey, null);
      assert.equal(cfg.measurements.get(15)!.expected.toString('hex'), Z);
      assert.ok(encodeAttestationConfig(cfg).includes('"bootloaderVersion":"latest","teeVersion":"latest","snpVersion":"latest","microcodeVersion":"latest"'));
    }
  });

  it('Azure SEV-SNP: MAAFallback with the default digest', () => {
    const cfg = defaultAttestationConfig('azure-sev-snp') as AzureSevSnpConfig;
    assert.equal(cfg.firmwareSignerConfig.enforcementPolicy, 'MAAFallback');
    assert.deepEqual(
      cfg.firmwareSignerConfig.acceptedKeyDigests.map((d) => d.toString('hex')),
      [DIGEST],
    );
    assert.equal(cfg.firmwareSignerConfig.maaURL, '');
  });

  it('Azure TDX: latest placeholders, no MRSEAM, Intel SGX root', () => {
    const cfg = defaultAttestationConfig('azure-tdx') as AzureTdxConfig;
    assert.equal(new X509Certificate(cfg.intelRootKey!).subject.split('\n').find((l) => l.startsWith('CN=')), 'CN=Intel SGX Root CA');
    assert.equal(cfg.mrSeam.length, 0);
    assert.ok(encodeAttestationConfig(cfg).includes('"qeSVN":"latest","pceSVN":"latest","teeTCBSVN":"latest","qeVendorID":"latest","xfam":"latest"'));
  });

  it('measurement-only variants use their provider defaults', () => {
    assert.equal(defaultAttestationConfig('qemu-vtpm').measurements.size, 7);
    assert.equal(defaultAttestationConfig('qemu-tdx').measurements.get(3)!.expected.length, 48);
    assert.equal(defaultAttestationConfig('dummy').measurements.size, 0);
    assert.equal(encodeAttestationConfig(defaultAttestationConfig('dummy')), '{}');
  });

  it('unknown variant', () => assert.throws(() => defaultAttestationConfig('nope'), (e: unknown) => e instanceof AttestationError && e.code === 'VARIANT_UNKNOWN'));
});

describe('embedded roots', () => {
  const cases: Array<[string, string, string]> = [
    ['ARK-Milan', ARK_MILAN_PEM, '69:D0:63:B4:53:44:D2:6A:2E:94:E1:F4:21:0D:E4:9E:F5:55:30:82:87:D4:C1:74:44:5C:95:63:9A:54:0B:CD'],
    ['Intel SGX Root CA', INTEL_SGX_ROOT_CA_PEM, '44:A0:19:6B:2B:99:F8:89:B8:E1:49:E9:5B:80:7A:35:0E:74:24:96:43:99:E8:85:A7:CB:B8:CC:FA:B6:74:D3'],
  ];
  for (const [cn, pem, fp] of cases) {
    it(`${cn} is pinned and self-signed`, () => {
      const c = new X509Certificate(pem);
      assert.equal(c.fingerprint256, fp);
      assert.ok(c.subject.includes(`CN=${cn}`));
      assert.ok(c.verify(c.publicKey));
      assert.equal(certificateToPem(c.raw), pem);
    });
  }
});

describe('current-generation extensions (config/current-gen.ts)', () => {
  const snp = (extra: string) =>
    `{"measurements":{"0":"${'00'.repeat(48)}"},"bootloaderVersion":3,"teeVersion":0,"snpVersion":8,"microcodeVersion":115,"amdRootKey":"","amdSigningKey":""${extra}}`;

  it('SEV-SNP: minimumReportVersion and the mitigation masks are read, and written back only when set', () => {
    const cfg = unmarshalAttestationConfig(snp(',"minimumReportVersion":5,"requiredLaunchMitigations":"0x3f","requiredCurrentMitigations":"1"'), 'aws-sev-snp');
    assert.ok(cfg.variant === 'aws-sev-snp');
    assert.deepEqual([cfg.minimumReportVersion, cfg.requiredLaunchMitigations, cfg.requiredCurrentMitigations], [5, 0x3fn, 1n]);
    assert.match(encodeAttestationConfig(cfg), /"amdSigningKey":"","minimumReportVersion":5,"requiredLaunchMitigations":"0x3f","requiredCurrentMitigations":"0x1"\}$/);
    const plain = unmarshalAttestationConfig(snp(''), 'gcp-sev-snp');
    assert.ok(!encodeAttestationConfig(plain).includes('minimumReportVersion'));
    assert.ok(!('minimumReportVersion' in plain));
  });

  const bad: Array<[string, string]> = [
    ['minimumReportVersion', ',"minimumReportVersion":1'],
    ['minimumReportVersion', ',"minimumReportVersion":6'],
    ['requiredLaunchMitigations', ',"requiredLaunchMitigations":"0x1ffffffffffffffff"'],
    ['requiredCurrentMitigations', ',"requiredCurrentMitigations":"bits"'],
  ];
  for (const [field, extra] of bad) {
    it(`SEV-SNP: ${extra.slice(1)} is CONFIG_INVALID naming ${field}`, () =>
      assert.throws(() => unmarshalAttestationConfig(snp(extra), 'azure-sev-snp'), (e: AttestationError) => e.code === 'CONFIG_INVALID' && e.details.field === field));
  }

  it('qemu-tdx: mrServiceTd (48 bytes) is read and written back; a wrong length is CONFIG_INVALID', () => {
    const doc = `{"measurements":{"0":"${'00'.repeat(48)}"},"mrServiceTd":"${'5a'.repeat(48)}"}`;
    const cfg = unmarshalAttestationConfig(doc, 'qemu-tdx');
    assert.ok(cfg.variant === 'qemu-tdx' && cfg.mrServiceTd?.equals(Buffer.alloc(48, 0x5a)));
    assert.ok(encodeAttestationConfig(cfg).endsWith(`"mrServiceTd":"${'5a'.repeat(48)}"}`));
    assert.throws(() => unmarshalAttestationConfig(`{"measurements":{"0":"${'00'.repeat(48)}"},"mrServiceTd":"abcd"}`, 'qemu-tdx'), (e: AttestationError) => e.code === 'CONFIG_INVALID' && e.details.field === 'mrServiceTd');
  });
});

describe('embedded AMD roots of the current product lines (config/roots.ts)', () => {
  const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256.replaceAll(':', '').toLowerCase();
  it('ARK-Genoa and ARK-Turin are AMD\'s (the fingerprints testdata/README.md records; equal to the testdata copies)', () => {
    assert.equal(fingerprint(ARK_GENOA_PEM), '4c6598d19c18719c5dfd4a7d335f674e5bfe1d8f800cea2cf270c10d103db2f1');
    assert.equal(fingerprint(ARK_TURIN_PEM), '1f084161a44bb6d93778a904877d4819cafa5d05ef4193b2ded9dd9c73dd3f6a');
    assert.equal(fingerprint(readFileSync(resolve(WORKSPACE_ROOT, 'testdata/amd/genoa-ark.pem'), 'utf8')), fingerprint(ARK_GENOA_PEM));
    assert.equal(fingerprint(readFileSync(resolve(WORKSPACE_ROOT, 'testdata/amd/turin-ark.pem'), 'utf8')), fingerprint(ARK_TURIN_PEM));
    assert.equal(new X509Certificate(ARK_TURIN_PEM).subject.split('\n').find((l) => l.startsWith('CN=')), 'CN=ARK-Turin');
  });
});
