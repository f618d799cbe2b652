import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { NOP_ATTESTATION_LOGGER } from '../interfaces.js';
import { SignatureMemo } from './chain.js';
import { parseAmdCertificate } from './certs.js';
import { chainKey, chainUrl, SnpCollateral, vcekKey, vcekUrl } from './collateral.js';
import type { AmdProductLine } from './lines.js';
import { buildReport, signReport, TestAmdRoot, type TestCert } from './golden-vectors.fixture.js';
import { SnpVerifier } from './verifier.js';

const TURIN_TCB = { fmc: 2, bootloader: 3, tee: 1, snp: 5, microcode: 75 };
const GENOA_TCB = { bootloader: 9, tee: 0, snp: 23, microcode: 72 };
const turinChip = Buffer.concat([Buffer.from('0011223344556677', 'hex'), Buffer.alloc(56)]);
const genoaChip = Buffer.alloc(64, 0x5e);

describe('KDS addressing per product line (docs/protocol/sev-snp.md §5)', () => {
  it('Milan and Genoa: the 64-byte CHIP_ID in hex and four SPLs; Turin: the first 8 bytes and fmcSPL first', () => {
    const base = 'http://kds.invalid';
    assert.equal(vcekUrl(base, vcekKey(genoaChip, GENOA_TCB, 'Genoa')), `${base}/vcek/v1/Genoa/${'5e'.repeat(64)}?blSPL=9&teeSPL=0&snpSPL=23&ucodeSPL=72`);
    assert.equal(vcekUrl(base, vcekKey(turinChip, TURIN_TCB, 'Turin')), `${base}/vcek/v1/Turin/0011223344556677?fmcSPL=2&blSPL=3&teeSPL=1&snpSPL=5&ucodeSPL=75`);
    assert.equal(vcekKey(genoaChip, GENOA_TCB, 'Milan').startsWith('Milan/'), true);
    assert.equal(chainUrl(base, chainKey('vcek', 'Turin')), `${base}/vcek/v1/Turin/cert_chain`);
    assert.equal(chainUrl(base, chainKey('vlek', 'Genoa')), `${base}/vlek/v1/Genoa/cert_chain`);
    assert.throws(() => vcekUrl(base, `Turin/${'00'.repeat(64)}/2.3.1.5.75`), /not a VCEK key/);
    assert.throws(() => chainUrl(base, 'vcek/Venice'), /not a chain key/);
  });
});

/** A loopback stand-in for AMD KDS serving one synthetic hierarchy per line; it records every request. */
class LineKds {
  readonly requests: string[] = [];
  readonly #server: Server;
  url = '';

  constructor(private readonly roots: Map<AmdProductLine, TestAmdRoot>, private readonly vceks: Map<string, TestCert>) {
    this.#server = createServer((req, res) => {
      const path = req.url ?? '';
      this.requests.push(path);
      const chain = /^\/vcek\/v1\/(Milan|Genoa|Turin)\/cert_chain$/.exec(path);
      if (chain) return void res.writeHead(200).end(this.roots.get(chain[1] as AmdProductLine)!.chainPem('vcek'));
      const vcek = this.vceks.get(path);
      if (!vcek) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(vcek.der);
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }
}

describe('a verifier fetches the VCEK and ASK of the report product line from a local KDS stand-in', () => {
  const roots = new Map<AmdProductLine, TestAmdRoot>();
  const vceks = new Map<string, TestCert>();
  const keys = new Map<AmdProductLine, TestCert>();
  let kds: LineKds;
  before(async () => {
    for (const line of ['Genoa', 'Turin'] as const) roots.set(line, await TestAmdRoot.create(undefined, undefined, line));
    keys.set('Turin', await roots.get('Turin')!.issue('vcek', { tcb: TURIN_TCB, chipId: turinChip }));
    keys.set('Genoa', await roots.get('Genoa')!.issue('vcek', { tcb: GENOA_TCB, chipId: genoaChip }));
    vceks.set(`/vcek/v1/Turin/0011223344556677?fmcSPL=2&blSPL=3&teeSPL=1&snpSPL=5&ucodeSPL=75`, keys.get('Turin')!);
    vceks.set(`/vcek/v1/Genoa/${'5e'.repeat(64)}?blSPL=9&teeSPL=0&snpSPL=23&ucodeSPL=72`, keys.get('Genoa')!);
    kds = new LineKds(roots, vceks);
    await kds.start();
  });
  after(() => kds.stop());

  const cases: { line: AmdProductLine; cpuid: [number, number, number]; tcb: typeof GENOA_TCB; chip: Buffer; version: number }[] = [
    { line: 'Turin', cpuid: [0x1a, 0x02, 0x01], tcb: TURIN_TCB, chip: turinChip, version: 5 },
    { line: 'Genoa', cpuid: [0x19, 0x11, 0x01], tcb: GENOA_TCB, chip: genoaChip, version: 4 },
  ];
  for (const c of cases) {
    it(`${c.line}: the VCEK at its KDS URL and the ${c.line} cert_chain, then the report verifies`, async () => {
      const ark = parseAmdCertificate(roots.get(c.line)!.ark.der, 'ARK');
      const memo = new SignatureMemo();
      const now = () => new Date();
      const collateral = new SnpCollateral({ kdsBaseUrl: kds.url, logger: NOP_ATTESTATION_LOGGER, retry: { maxAttempts: 1 } });
      const verifier = new SnpVerifier({ ark, memo, now, logger: NOP_ATTESTATION_LOGGER, collateral: collateral.views(ark, memo, now), policy: { vmpl: 0, minimumTcb: c.tcb, minimumLaunchTcb: c.tcb, permitProvisionalFirmware: false } });
      const report = signReport(buildReport({ version: c.version, cpuid: c.cpuid, tcb: c.tcb, chipId: c.chip }), keys.get(c.line)!.privateKey);
      kds.requests.length = 0;
      try {
        const v = await verifier.verify({ report, reportSigner: Buffer.alloc(0), certChain: Buffer.alloc(0) }, () => undefined);
        assert.equal(v.productLine, c.line);
      } finally {
        collateral.close();
      }
      const wantVcek = [...vceks.keys()].find((k) => k.startsWith(`/vcek/v1/${c.line}/`))!;
      assert.deepEqual([...kds.requests].sort(), [wantVcek, `/vcek/v1/${c.line}/cert_chain`].sort());
    });
  }
});
