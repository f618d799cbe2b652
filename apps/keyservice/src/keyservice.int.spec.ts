/**
 * Integration: the real keyservice process on a loopback port, called with a grpc-js client.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { kms } from '@asterism/proto';
import { findSecretLeaks, startTsProcess, type ServiceProcess } from '@asterism/testing';

const ENTRY = 'apps/keyservice/src/main.ts';

function writeSecrets(key: Buffer, salt: Buffer) {
  const dir = mkdtempSync(join(tmpdir(), 'keyservice-int-'));
  writeFileSync(join(dir, 'mastersecret'), key);
  writeFileSync(join(dir, 'salt'), salt);
  return { secret: join(dir, 'mastersecret'), salt: join(dir, 'salt') };
}

async function startKeyservice(key: Buffer, salt: Buffer, extra: string[] = []) {
  const files = writeSecrets(key, salt);
  const proc = startTsProcess(ENTRY, ['--host=127.0.0.1', '--port=0', '--metrics-port=0', `--master-secret=${files.secret}`, `--salt=${files.salt}`, ...extra]);
  const ready = await proc.waitForLog((l) => l.msg === 'keyservice serving');
  return { proc, port: ready.port as number, metricsPort: ready.metricsPort as number };
}

function getDataKey(client: kms.APIClient, req: kms.GetDataKeyRequest) {
  return new Promise<{ err: grpc.ServiceError | null; key?: Buffer }>((resolve) =>
    client.getDataKey(req, (err, res) => resolve({ err, ...(res ? { key: res.dataKey } : {}) })),
  );
}

describe('keyservice process (worked example of docs/protocol/key-hierarchy.md)', () => {
  let proc: ServiceProcess;
  let client: kms.APIClient;
  let metricsPort: number;
  let port: number;

  before(async () => {
    const started = await startKeyservice(Buffer.alloc(32, 0x00), Buffer.alloc(32, 0x01));
    ({ proc, metricsPort, port } = started);
    client = new kms.APIClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    client?.close();
    await proc?.stop();
  });

  it('returns the predicted disk key for the all-zero UUID', async () => {
    const { err, key } = await getDataKey(client, { dataKeyId: '00000000-0000-0000-0000-000000000000', length: 32 });
    assert.equal(err, null);
    assert.equal(key?.toString('hex'), 'cafa93353ca216e2a84aa958f9126808bcfff0f6c32187710fb583caa1c70b64');
  });

  it('returns the predicted measurement secret and SSH CA seed', async () => {
    assert.equal(
      (await getDataKey(client, { dataKeyId: 'measurementSecret', length: 32 })).key?.toString('hex'),
      'c5adf4439499bbcd0ecd3af0048cac23680fd31e21050d5bdb7861be8b7e8d32',
    );
    assert.equal(
      (await getDataKey(client, { dataKeyId: 'ca_emergency_ssh', length: 32 })).key?.toString('hex'),
      '3dcce96e5c53e7f1696aca1cd27ed294d0f545b6384abf5fe6fc1ed53980268c',
    );
  });

  it('answers bad requests with InvalidArgument and keeps serving', async () => {
    for (const req of [
      { dataKeyId: '', length: 32 },
      { dataKeyId: 'x', length: 0 },
      { dataKeyId: 'x', length: 100_000 },
      { dataKeyId: 'x'.repeat(1000), length: 32 },
    ]) {
      const { err } = await getDataKey(client, req);
      assert.equal(err?.code, grpc.status.INVALID_ARGUMENT, `request ${JSON.stringify(req).slice(0, 60)}`);
    }
    const { err } = await getDataKey(client, { dataKeyId: 'still-alive', length: 16 });
    assert.equal(err, null);
  });

  it('rejects oversized request messages with ResourceExhausted', async () => {
    const { err } = await getDataKey(client, { dataKeyId: 'x'.repeat(200_000), length: 32 });
    assert.equal(err?.code, grpc.status.RESOURCE_EXHAUSTED);
    assert.equal((await getDataKey(client, { dataKeyId: 'after', length: 8 })).err, null);
  });

  it('serves grpc.health.v1 as SERVING', async () => {
    const { service } = await import('grpc-health-check');
    const Health = grpc.makeGenericClientConstructor(service as unknown as grpc.ServiceDefinition, 'Health');
    const health = new Health(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as {
      check(req: { service: string }, cb: (e: grpc.ServiceError | null, r: { status: string | number }) => void): void;
      close(): void;
    };
    for (const name of ['', 'kms.API']) {
      const res = await new Promise<{ status: string | number }>((resolve, reject) => health.check({ service: name }, (e, r) => (e ? reject(e) : resolve(r))));
      assert.ok(res.status === 'SERVING' || res.status === 1, `health of "${name}" is ${res.status}`);
    }
    health.close();
  });

  it('exposes Prometheus metrics with per-code call counts', async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    assert.match(text, /keyservice_grpc_server_handled_total\{method="\/kms\.API\/GetDataKey",code="Ok"\} \d+/);
    assert.match(text, /keyservice_grpc_server_handled_total\{method="\/kms\.API\/GetDataKey",code="InvalidArgument"\} [1-9]/);
    assert.match(text, /keyservice_grpc_server_handling_seconds_bucket/);
  });

  it('logs failed calls with method, peer, status and duration, successful ones only at debug', () => {
    const rpcLines = proc.jsonLogs().filter((l) => l.msg === 'rpc finished' && l.method === '/kms.API/GetDataKey');
    assert.ok(rpcLines.length >= 4, 'the four invalid requests above are logged');
    for (const l of rpcLines) {
      assert.equal(l.component, 'keyservice');
      assert.match(String(l.peer), /127\.0\.0\.1/);
      assert.equal(typeof l.durationMs, 'number');
      assert.equal(l.level, 'warn');
      assert.ok(['InvalidArgument', 'ResourceExhausted'].includes(String(l.status)));
    }
  });
});

describe('keyservice process: --workers 2 (node:cluster)', () => {
  it('serves the predicted key from every worker, aggregates metrics and stops all workers on SIGTERM', async () => {
    const { proc, port, metricsPort } = await startKeyservice(Buffer.alloc(32, 0x00), Buffer.alloc(32, 0x01), ['--workers=2']);
    const serving = proc.jsonLogs().find((l) => l.msg === 'keyservice serving');
    assert.equal(serving?.workers, 2);
    const workerPids = childPids(proc.child.pid!);
    assert.equal(workerPids.length, 2, 'two worker processes');
    const calls = 12;
    try {
      // A new connection per client: the primary hands connections to the workers round-robin.
      for (let i = 0; i < calls; i++) {
        const client = new kms.APIClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
        const { err, key } = await getDataKey(client, { dataKeyId: '00000000-0000-0000-0000-000000000000', length: 32 });
        client.close();
        assert.equal(err, null);
        assert.equal(key?.toString('hex'), 'cafa93353ca216e2a84aa958f9126808bcfff0f6c32187710fb583caa1c70b64');
      }
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const ok = /keyservice_grpc_server_handled_total\{method="\/kms\.API\/GetDataKey",code="Ok"\} (\d+)/.exec(text);
      assert.equal(Number(ok?.[1]), calls, 'the primary sums both workers\' counters');
    } finally {
      const exit = await proc.stop('SIGTERM');
      assert.equal(exit.code, 0, 'graceful shutdown exits 0');
    }
    for (const pid of workerPids) assert.equal(alive(pid), false, `worker ${pid} is gone`);
  });
});

/** Direct children of pid (Linux /proc). */
function childPids(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((t) =>
    readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('keyservice process: secrets never reach the logs', () => {
  it('with debug logging, serving many requests, no master secret, salt or returned key appears', async () => {
    const key = randomBytes(32);
    const salt = randomBytes(32);
    const { proc, port } = await startKeyservice(key, salt, ['-v', '-1']);
    const client = new kms.APIClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const returned: Buffer[] = [];
    try {
      for (let i = 0; i < 20; i++) {
        const { err, key: k } = await getDataKey(client, { dataKeyId: `disk-${i}`, length: 32 });
        assert.equal(err, null);
        returned.push(k!);
      }
      // Also exercise the error paths with debug on.
      await getDataKey(client, { dataKeyId: '', length: 32 });
      await getDataKey(client, { dataKeyId: 'x', length: 0 });
    } finally {
      client.close();
      const exit = await proc.stop('SIGTERM');
      assert.equal(exit.code, 0, 'graceful shutdown exits 0');
    }
    const output = proc.allOutput();
    assert.ok(proc.jsonLogs().some((l) => l.level === 'debug' && l.msg === 'rpc finished' && l.status === 'Ok'), 'successful calls are logged at debug');
    assert.ok(proc.jsonLogs().some((l) => l.msg === 'shutdown complete'));
    const secrets = [
      { name: 'master secret', value: key },
      { name: 'salt', value: salt },
      ...returned.map((value, i) => ({ name: `returned key ${i}`, value })),
    ];
    assert.deepEqual(findSecretLeaks(output, secrets), []);
  });
});

describe('keyservice process: start-up errors', () => {
  const cases: Array<[string, Buffer, Buffer, RegExp]> = [
    ['a master secret shorter than 16 bytes', Buffer.alloc(15, 1), Buffer.alloc(32, 2), /master secret .* is 15 bytes, need at least 16/],
    ['a salt shorter than 32 bytes', Buffer.alloc(32, 1), Buffer.alloc(31, 2), /salt .* is 31 bytes, need at least 32/],
  ];
  for (const [name, key, salt, message] of cases) {
    it(`exits 1 with a clear error for ${name}`, async () => {
      const files = writeSecrets(key, salt);
      const proc = startTsProcess(ENTRY, ['--port=0', '--metrics-port=-1', `--master-secret=${files.secret}`, `--salt=${files.salt}`]);
      const { code } = await proc.exited;
      assert.equal(code, 1);
      assert.match(proc.allOutput(), message);
    });
  }

  it('exits 1 naming the missing file', async () => {
    const proc = startTsProcess(ENTRY, ['--port=0', '--metrics-port=-1', '--master-secret=/nonexistent/ms', '--salt=/nonexistent/salt']);
    assert.equal((await proc.exited).code, 1);
    assert.match(proc.allOutput(), /reading master secret file \/nonexistent\/ms: ENOENT/);
  });

  it('prints usage for --help and exits 0; bad flags exit 2', async () => {
    const help = startTsProcess(ENTRY, ['--help']);
    assert.equal((await help.exited).code, 0);
    assert.match(help.allOutput(), /Usage: keyservice \[flags\][\s\S]*--master-secret/);
    const bad = startTsProcess(ENTRY, ['--bogus']);
    assert.equal((await bad.exited).code, 2);
    assert.match(bad.allOutput(), /Unknown option '--bogus'/);
  });
});
