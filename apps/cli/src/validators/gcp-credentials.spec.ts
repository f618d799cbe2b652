/**
 * Google credentials of the CLI against a local OAuth token endpoint (the `token_uri` of the
 * credentials file points at loopback): what each source sends, that tokens are reused, that a
 * service-account assertion really verifies with the account's public key, and that nothing
 * secret reaches an error.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, verify } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CliValidatorError } from './errors.js';
import { gcpAccessTokenSource } from './gcp-credentials.js';

const REFRESH_TOKEN = 'refresh-secret-1//abc';
const CLIENT_SECRET = 'client-secret-xyz';
const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });

/** A token endpoint: answers refresh-token and JWT-bearer grants, records each form. */
function tokenEndpoint(): { server: Server; forms: URLSearchParams[]; status: { code: number } } {
  const forms: URLSearchParams[] = [];
  const status = { code: 200 };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      forms.push(form);
      if (status.code !== 200) return void res.writeHead(status.code, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant', echoed: body }));
      const token = form.get('grant_type') === 'refresh_token' ? 'ya29.user' : 'ya29.service-account';
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: token, expires_in: 3599, token_type: 'Bearer' }));
    });
  });
  return { server, forms, status };
}

describe('Google credentials of the CLI (gcp-sev-es, gcp-sev-snp)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'asterism-gcp-creds-'));
  const endpoint = tokenEndpoint();
  let tokenUri = '';
  const file = (name: string, content: object) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(content));
    return path;
  };
  before(async () => {
    await new Promise<void>((resolve) => endpoint.server.listen(0, '127.0.0.1', resolve));
    tokenUri = `http://127.0.0.1:${(endpoint.server.address() as AddressInfo).port}/token`;
  });
  after(() => {
    endpoint.server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('GOOGLE_OAUTH_ACCESS_TOKEN is used as it is, before any credentials file', async () => {
    const source = await gcpAccessTokenSource('gcp-sev-es', { GOOGLE_OAUTH_ACCESS_TOKEN: 'ya29.given', GOOGLE_APPLICATION_CREDENTIALS: join(dir, 'absent.json') });
    assert.equal(await source(), 'ya29.given');
  });

  it('authorized_user (gcloud auth application-default login): one refresh-token grant, the token is reused', async () => {
    const path = file('user.json', { type: 'authorized_user', client_id: 'cid.apps', client_secret: CLIENT_SECRET, refresh_token: REFRESH_TOKEN, token_uri: tokenUri });
    const before = endpoint.forms.length;
    const source = await gcpAccessTokenSource('gcp-sev-es', { GOOGLE_APPLICATION_CREDENTIALS: path });
    assert.equal(await source(), 'ya29.user');
    assert.equal(await source(), 'ya29.user');
    const sent = endpoint.forms.slice(before);
    assert.equal(sent.length, 1);
    assert.deepEqual(Object.fromEntries(sent[0]!), { grant_type: 'refresh_token', client_id: 'cid.apps', client_secret: CLIENT_SECRET, refresh_token: REFRESH_TOKEN });
  });

  it('the default ADC file under $HOME is found without GOOGLE_APPLICATION_CREDENTIALS', async () => {
    const home = mkdtempSync(join(dir, 'home-'));
    const gcloud = join(home, '.config', 'gcloud');
    mkdirSync(gcloud, { recursive: true });
    writeFileSync(join(gcloud, 'application_default_credentials.json'), JSON.stringify({ type: 'authorized_user', client_id: 'c', client_secret: 's', refresh_token: 'r', token_uri: tokenUri }));
    assert.equal(await (await gcpAccessTokenSource('gcp-sev-es', { HOME: home }))(), 'ya29.user');
  });

  it('service_account key: a JWT-bearer grant whose RS256 assertion verifies with the account key, asking for Compute read-only', async () => {
    const pem = sa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const path = file('sa.json', { type: 'service_account', client_email: 'verifier@proj.iam.test', private_key: pem, token_uri: tokenUri });
    const before = endpoint.forms.length;
    assert.equal(await (await gcpAccessTokenSource('gcp-sev-es', { GOOGLE_APPLICATION_CREDENTIALS: path }))(), 'ya29.service-account');
    const form = endpoint.forms[before]!;
    assert.equal(form.get('grant_type'), 'urn:ietf:params:oauth:grant-type:jwt-bearer');
    const [header, claims, signature] = form.get('assertion')!.split('.');
    assert.ok(verify('sha256', Buffer.from(`${header}.${claims}`), sa.publicKey, Buffer.from(signature!, 'base64url')), 'the assertion is signed by the service-account key');
    const c = JSON.parse(Buffer.from(claims!, 'base64url').toString()) as Record<string, unknown>;
    assert.deepEqual([c.iss, c.aud, c.scope], ['verifier@proj.iam.test', tokenUri, 'https://www.googleapis.com/auth/compute.readonly']);
    assert.equal((c.exp as number) - (c.iat as number), 3600);
  });

  it('a refused grant names the endpoint and status, never the refresh token or client secret it sent', async () => {
    const path = file('user2.json', { type: 'authorized_user', client_id: 'cid', client_secret: CLIENT_SECRET, refresh_token: REFRESH_TOKEN, token_uri: tokenUri });
    endpoint.status.code = 400;
    try {
      const source = await gcpAccessTokenSource('gcp-sev-es', { GOOGLE_APPLICATION_CREDENTIALS: path });
      await assert.rejects(source(), (err: Error) => {
        assert.match(err.message, /token endpoint http:\/\/127\.0\.0\.1:\d+\/token: HTTP 400/);
        assert.doesNotMatch(err.message, /refresh-secret|client-secret/);
        return true;
      });
    } finally {
      endpoint.status.code = 200;
    }
  });

  const refusals: Array<[string, NodeJS.ProcessEnv | (() => NodeJS.ProcessEnv), string, RegExp]> = [
    ['nothing configured', () => ({ HOME: mkdtempSync(join(dir, 'empty-home-')) }), 'GCP_CREDENTIALS_MISSING', /gcp-sev-es: .*needs Google credentials: set GOOGLE_OAUTH_ACCESS_TOKEN .*GOOGLE_APPLICATION_CREDENTIALS/],
    ['GOOGLE_APPLICATION_CREDENTIALS names a missing file', () => ({ GOOGLE_APPLICATION_CREDENTIALS: join(dir, 'nope.json') }), 'GCP_CREDENTIALS_INVALID', /cannot read the credentials file .*nope\.json/],
    ['an unsupported credentials type', () => ({ GOOGLE_APPLICATION_CREDENTIALS: file('ext.json', { type: 'external_account' }) }), 'GCP_CREDENTIALS_INVALID', /type "external_account"; supported: authorized_user, service_account/],
    ['a field missing', () => ({ GOOGLE_APPLICATION_CREDENTIALS: file('half.json', { type: 'authorized_user', client_id: 'c' }) }), 'GCP_CREDENTIALS_INVALID', /has no "client_secret"/],
    [
      'a token endpoint over plain HTTP off loopback (refresh tokens would travel in clear)',
      () => ({ GOOGLE_APPLICATION_CREDENTIALS: file('http.json', { type: 'authorized_user', client_id: 'c', client_secret: 's', refresh_token: 'r', token_uri: 'http://tokens.example/token' }) }),
      'GCP_CREDENTIALS_INVALID',
      /token_uri http:\/\/tokens\.example\/token is not https/,
    ],
  ];
  for (const [name, env, code, message] of refusals) {
    it(`${name}: ${code}`, async () => {
      await assert.rejects(gcpAccessTokenSource('gcp-sev-es', typeof env === 'function' ? env() : env), (err: unknown) => {
        assert.ok(err instanceof CliValidatorError, String(err));
        assert.equal(err.code, code);
        assert.match(err.message, message);
        return true;
      });
    });
  }
});
