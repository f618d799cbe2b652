import {
  AttestationError,
  DcapVerifier,
  decodeAzureTdxInstanceInfo,
  decodeDocument,
  decodeTdxDocument,
  parseTdxQuote,
  tdMeasurements,
  type DcapCollateral,
  type DcapVerification,
  type TdReportBody,
  type TdxQuote,
  type TdxQuoteVerifier,
} from '@asterism/attestation';

/**
 * A TdxQuoteVerifier that keeps what `asterism verify` shows for a TDX node: the DCAP outcome
 * (TCB status, or the failing check) of the last quote it verified.
 */
export class RecordingTdxVerifier implements TdxQuoteVerifier {
  last: { ok: true; verification: DcapVerification } | { ok: false; error: Error } | undefined;

  constructor(private readonly inner: TdxQuoteVerifier = new DcapVerifier()) {}

  verify(quote: TdxQuote, collateral: DcapCollateral, at: Date): DcapVerification {
    try {
      const verification = this.inner.verify(quote, collateral, at);
      this.last = { ok: true, verification };
      return verification;
    } catch (err) {
      this.last = { ok: false, error: err as Error };
      throw err;
    }
  }
}

/** The TD report body inside a qemu-tdx document or an azure-tdx vTPM document (undefined otherwise). */
export function tdBodyOf(document: Uint8Array): TdReportBody | undefined {
  try {
    return parseTdxQuote(decodeTdxDocument(document).rawQuote).body;
  } catch {
    // not qemu-tdx
  }
  try {
    return parseTdxQuote(decodeAzureTdxInstanceInfo(decodeDocument(document).instanceInfo).attestationReport).body;
  } catch {
    return undefined;
  }
}

const NAMES = ['MRTD', 'RTMR0', 'RTMR1', 'RTMR2', 'RTMR3'];

/** Plain-text TD facts: measurements (indices 0..4), TEE TCB SVN(s), MRSEAM, XFAM, MRSERVICETD (TD 1.5), and the DCAP outcome. */
export function formatTdxReport(body: TdReportBody, dcap: RecordingTdxVerifier['last']): string {
  const lines = ['TD measurements (index: register value)'];
  for (const [i, value] of tdMeasurements(body)) lines.push(`${String(i).padStart(3)}  ${NAMES[i]!.padEnd(6)} ${value.toString('hex')}`);
  lines.push(`TEE TCB SVN  ${body.teeTcbSvn.toString('hex')}`, `MRSEAM       ${body.mrSeam.toString('hex')}`, `XFAM         ${body.xfam.toString('hex')}`);
  if (body.teeTcbSvn2) lines.push(`TEE TCB SVN2 ${body.teeTcbSvn2.toString('hex')} (TD 1.5: the TDX module running now)`);
  if (body.mrServiceTd) lines.push(`MRSERVICETD  ${body.mrServiceTd.toString('hex')}`);
  if (!dcap) {
    lines.push('DCAP: not reached');
  } else if (dcap.ok) {
    const t = dcap.verification.tcb;
    lines.push(`DCAP: quote verified; TCB status ${t.status} (platform ${t.platformStatus}, QE ${t.qeStatus}${t.moduleStatus ? `, TDX module ${t.moduleStatus}` : ''}), TCB date ${t.tcbDate}, FMSPC ${dcap.verification.fmspc}`);
    if (t.relaunchAdvised) lines.push('      relaunch advised: the TD launched under an out-of-date TDX module; the platform now runs an up-to-date one');
    if (t.advisoryIds.length > 0) lines.push(`      advisories: ${t.advisoryIds.join(', ')}`);
  } else {
    const err = dcap.error;
    const code = err instanceof AttestationError ? err.code : 'ERROR';
    const details = err instanceof AttestationError && Object.keys(err.details).length > 0 ? ` ${JSON.stringify(err.details)}` : '';
    lines.push(`DCAP: failing check ${code}: ${err.message}${details}`);
  }
  return lines.join('\n');
}
