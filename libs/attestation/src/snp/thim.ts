/**
 * Azure's Trusted Hardware Identity Management endpoint on the instance metadata service
 * (docs/protocol/sev-snp.md §8): the VCEK and its chain for this VM, PEM.
 */
import { AttestationError } from '../errors.js';
import { goField, parseGoJsonObject } from '../go-json.js';

/** Default base URL of the Azure instance metadata service. */
export const AZURE_IMDS_BASE_URL = 'http://169.254.169.254';

/** VCEK and chain as THIM returns them. */
export interface ThimCertificates {
  readonly vcekPem: string;
  readonly chainPem: string;
}

/** GETs `/metadata/THIM/amd/certification` (header `Metadata: true`). */
export async function fetchThimCertificates(baseUrl = AZURE_IMDS_BASE_URL, signal?: AbortSignal, fetchImpl: typeof fetch = fetch): Promise<ThimCertificates> {
  const url = `${baseUrl.replace(/\/$/, '')}/metadata/THIM/amd/certification`;
  const fail = (why: string) => new AttestationError('ISSUER_FAILED', `getting VCEK from THIM (${url}): ${why}`, { details: { step: 'fetching VCEK', url } });
  let res: Response;
  try {
    res = await fetchImpl(url, { headers: { Metadata: 'true' }, signal: signal ?? AbortSignal.timeout(30_000) });
  } catch (err) {
    throw fail((err as Error).message);
  }
  if (!res.ok) throw fail(`HTTP ${res.status}`);
  const body = parseGoJsonObject(Buffer.from(await res.arrayBuffer()), 'THIM answer');
  const vcekPem = goField(body, 'vcekCert');
  const chainPem = goField(body, 'certificateChain');
  if (typeof vcekPem !== 'string' || vcekPem.trim() === '') throw fail('answer has no vcekCert');
  return { vcekPem, chainPem: typeof chainPem === 'string' ? chainPem : '' };
}
