import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failureSummary } from './kubeadm-backend.js';

describe('kubeadm failure summary', () => {
  const cases: Array<{ name: string; stderr: string; want: string }> = [
    {
      name: 'preflight errors are kept, the -v=5 stack trace dropped',
      stderr: 'I1123 log line\n[preflight] Some fatal errors occurred:\n\t[ERROR ImagePull]: failed to pull image x\n[preflight] If you know...\nerror: error execution phase preflight: preflight checks failed\ngoroutine 1\nruntime.main\n\truntime/proc.go:290',
      want: '[preflight] Some fatal errors occurred: | [ERROR ImagePull]: failed to pull image x | error: error execution phase preflight: preflight checks failed',
    },
    { name: 'without kubeadm error lines, the last five lines', stderr: 'a\nb\nc\nd\ne\nf', want: 'b | c | d | e | f' },
  ];
  for (const c of cases) it(c.name, () => assert.equal(failureSummary(c.stderr), c.want));
});
