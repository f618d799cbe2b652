/**
 * A local stand-in for Intel PCS (docs/protocol/tdx-dcap.md): answers the four collateral
 * requests of one platform with the bodies and issuer-chain headers PCS sends, and counts them.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DcapCollateral, PcsFetcherOptions } from '@asterism/attestation';

/** A running stand-in PCS. */
export interface PcsServer {
  /** Fetcher options pointing at this server (PCS base URL and root CRL URL). */
  readonly pcs: PcsFetcherOptions;
  /** Paths requested so far. */
  readonly requests: string[];
  stop(): Promise<void>;
}

/** Serves `collateral` on 127.0.0.1 (random port). */
export async function startPcsServer(collateral: DcapCollateral): Promise<PcsServer> {
  const requests: string[] = [];
  const routes: Record<string, { body: string | Uint8Array; chain?: [string, string] }> = {
    '/tdx/certification/v4/tcb': { body: collateral.tcbInfo, chain: ['tcb-info-issuer-chain', collateral.tcbInfoIssuerChain] },
    '/tdx/certification/v4/qe/identity': { body: collateral.qeIdentity, chain: ['sgx-enclave-identity-issuer-chain', collateral.qeIdentityIssuerChain] },
    '/sgx/certification/v4/pckcrl': { body: collateral.pckCrl, chain: ['sgx-pck-crl-issuer-chain', collateral.pckCrlIssuerChain] },
    '/IntelSGXRootCA.der': { body: collateral.rootCrl },
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    requests.push(req.url ?? '/');
    const route = routes[path];
    if (!route) return void res.writeHead(404).end();
    res.writeHead(200, route.chain ? { [route.chain[0]]: encodeURIComponent(route.chain[1]) } : {}).end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    pcs: { baseUrl: base, rootCrlUrl: `${base}/IntelSGXRootCA.der` },
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
