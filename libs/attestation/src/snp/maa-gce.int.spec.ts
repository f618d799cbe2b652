import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { GceComputeShieldedIdentity, GceMetadataClient } from './gce.js';
import type { GceInstanceInfo } from './instance-info.js';
import { JwksMaaTokenVerifier } from './maa.js';

/** A loopback HTTP server answering through `handler`. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const refused = (code: string, re: RegExp) => (e: unknown) => {
  assert.ok(e instanceof AttestationError, String(e));
  assert.equal(e.code, code, e.message);
  assert.match(e.message, re);
  return true;
};

const b64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

function jwt(key: KeyObject, payload: Record<string, unknown>, header: Record<string, unknown> = { alg: 'RS256', kid: 'k1', typ: 'JWT' }): string {
  const signed = `${b64url(header)}.${b64url(payload)}`;
  return `${signed}.${sign('sha256', Buffer.from(signed), key).toString('base64url')}`;
}

describe('MAA token verification against a local JWKS endpoint', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const now = new Date('2024-06-01T00:00:00Z');
  const t = now.getTime() / 1000;
  const extraData = randomBytes(32);
  const claims = (o: Record<string, unknown> = {}) => ({ exp: t + 600, nbf: t - 60, 'x-ms-runtime': { 'client-payload': { nonce: extraData.toString('base64') } }, ...o });
  let maa: { url: string; server: Server };
  let failing: { url: string; server: Server };
  let fetches = 0;

  before(async () => {
    maa = await serve((req, res) => {
      fetches++;
      if (req.url !== '/certs') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [{ kid: 'k1', ...publicKey.export({ format: 'jwk' }) }] }));
    });
    failing = await serve((_req, res) => void res.writeHead(503).end());
  });
  after(() => {
    maa?.server.close();
    failing?.server.close();
  });

  it('a token signed by a JWKS key, in its validity window, for this extraData is accepted (keys fetched once)', async () => {
    const v = new JwksMaaTokenVerifier(() => now);
    await v.verify(jwt(privateKey, claims()), maa.url, extraData);
    await v.verify(jwt(privateKey, claims()), `${maa.url}/`.replace(/\/$/, ''), extraData);
    assert.equal(fetches, 1);
  });

  const cases: Array<[string, () => string, string, RegExp]> = [
    ['another extraData', () => jwt(privateKey, claims({ 'x-ms-runtime': { 'client-payload': { nonce: 'AAAA' } } })), 'MAA_TOKEN_INVALID', /client-payload\.nonce does not match/],
    ['expired', () => jwt(privateKey, claims({ exp: t - 1 })), 'MAA_TOKEN_INVALID', /expired/],
    ['not yet valid', () => jwt(privateKey, claims({ nbf: t + 60 })), 'MAA_TOKEN_INVALID', /not yet valid/],
    ['signed by a key not in the JWKS', () => jwt(other, claims()), 'MAA_TOKEN_INVALID', /signature does not verify/],
    ['unknown kid', () => jwt(privateKey, claims(), { alg: 'RS256', kid: 'k2' }), 'MAA_TOKEN_INVALID', /no key "k2"/],
    ['alg none', () => `${b64url({ alg: 'none', kid: 'k1' })}.${b64url(claims())}.`, 'MAA_TOKEN_INVALID', /algorithm none is not RS256/],
    ['not a JWS', () => 'abc.def', 'MAA_TOKEN_INVALID', /not a compact JWS/],
  ];
  for (const [name, token, code, re] of cases) {
    it(`refuses ${name}: ${code}`, async () => {
      await assert.rejects(new JwksMaaTokenVerifier(() => now).verify(token(), maa.url, extraData), refused(code, re));
    });
  }

  it('an unreachable MAA instance is COLLATERAL_UNAVAILABLE, an empty maaURL MAA_TOKEN_INVALID', async () => {
    await assert.rejects(new JwksMaaTokenVerifier(() => now).verify(jwt(privateKey, claims()), failing.url, extraData), refused('COLLATERAL_UNAVAILABLE', /HTTP 503/));
    await assert.rejects(new JwksMaaTokenVerifier(() => now).verify(jwt(privateKey, claims()), '', extraData), refused('MAA_TOKEN_INVALID', /maaURL is empty/));
  });
});

describe('GCE shielded identity through local metadata and Compute API servers', () => {
  const ak = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
  const instance: GceInstanceInfo = { projectId: 'asterism-test', zone: 'europe-west3-a', instanceName: 'node-1', projectNumber: 0n, instanceId: 0n };
  let metadata: { url: string; server: Server };
  let compute: { url: string; server: Server };
  let answer: () => unknown = () => ({ signingKey: { ekPub: ak.export({ type: 'spki', format: 'pem' }) } });

  before(async () => {
    metadata = await serve((req, res) => {
      if (req.url !== '/computeMetadata/v1/instance/service-accounts/default/token' || req.headers['metadata-flavor'] !== 'Google') return void res.writeHead(404).end();
      res.writeHead(200).end(JSON.stringify({ access_token: 'tok-123', expires_in: 3600, token_type: 'Bearer' }));
    });
    compute = await serve((req, res) => {
      if (req.headers.authorization !== 'Bearer tok-123') return void res.writeHead(401).end();
      if (req.url !== '/compute/v1/projects/asterism-test/zones/europe-west3-a/instances/node-1/getShieldedInstanceIdentity') return void res.writeHead(404).end();
      res.writeHead(200).end(JSON.stringify(answer()));
    });
  });
  after(() => {
    metadata?.server.close();
    compute?.server.close();
  });

  const source = () => {
    const md = new GceMetadataClient(metadata.url);
    return new GceComputeShieldedIdentity((signal) => md.accessToken(signal), compute.url);
  };

  it('returns the instance signing key (token from the metadata server)', async () => {
    assert.ok((await source().signingKey(instance)).equals(ak));
  });

  it('refuses with AK_UNTRUSTED: unknown instance, a name with a path in it, an answer without ekPub', async () => {
    await assert.rejects(source().signingKey({ ...instance, instanceName: 'node-2' }), refused('AK_UNTRUSTED', /HTTP 404/));
    await assert.rejects(source().signingKey({ ...instance, zone: '../../x' }), refused('AK_UNTRUSTED', /invalid zone/));
    answer = () => ({ signingKey: {} });
    await assert.rejects(source().signingKey(instance), refused('AK_UNTRUSTED', /no signingKey\.ekPub/));
  });
});
