import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger } from '@asterism/logger';
import { phaseProgress, spawnRunner } from './kubeadm-backend.js';

/** A logger whose JSON lines can be read back. */
function capture() {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (d: Buffer) => chunks.push(d.toString()));
  const logger = createLogger({ component: 'test', level: 'debug', stream });
  return { logger, lines: async () => (await new Promise((r) => setImmediate(r)), chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)) };
}

describe('kubeadm phase progress', () => {
  it('logs [phase] lines with their offset, drops other lines, hides anything shaped like a bootstrap token', async () => {
    const { logger, lines } = capture();
    const see = phaseProgress(logger, 'kubeadm join progress');
    see('[preflight] Running pre-flight checks');
    see('This node has joined the cluster:');
    see('  [kubelet-start] Waiting for the kubelet to perform the TLS Bootstrap');
    see('[discovery] using token abcdef.0123456789abcdef');
    const got = await lines();
    assert.deepEqual(
      got.map((l) => [l.msg, l.phase, l.line, typeof l.atMs]),
      [
        ['kubeadm join progress', 'preflight', 'Running pre-flight checks', 'number'],
        ['kubeadm join progress', 'kubelet-start', 'Waiting for the kubelet to perform the TLS Bootstrap', 'number'],
        ['kubeadm join progress', 'discovery', 'using token <token>', 'number'],
      ],
    );
  });

  it('the spawn runner hands over complete stdout lines as they arrive, also across writes', async () => {
    const seen: string[] = [];
    const out = await spawnRunner('sh', ['-c', 'printf "[a] one\\n[b] tw"; sleep 0.05; printf "o\\n[c] three\\n"'], undefined, (l) => seen.push(l));
    assert.deepEqual(seen, ['[a] one', '[b] two', '[c] three']);
    assert.equal(out, '[a] one\n[b] two\n[c] three\n');
  });
});
