/**
 * Issue 37 item 2 against the joinservice's real server (own process, production aTLS transport,
 * qemu-vtpm validator): an attested peer (evidence from a swtpm quote over each connection's TLS
 * exporter) sends 40,000 half-open HTTP/2 streams, written as raw frames so it ignores the
 * server's stream cap as an attacker would. Expected (docs/adr/0027): at most the cap of streams
 * per connection is ever taken, a peer that opens more loses the connection (GOAWAY), a held
 * stream is answered DEADLINE_EXCEEDED and reset once its request fails to arrive, the RSS stays
 * bounded and the log grows per connection, not per stream. The figures are printed.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { QemuVtpmIssuer } from '@asterism/attestation';
import { ATLS_EVIDENCE_METADATA_KEY, issueExporterEvidence } from '@asterism/atls';
import { missingComponent, startTsProcess, type ServiceProcess } from '@asterism/testing';
import { TPM_ALG } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { headerBlock, RawH2Session } from './raw-h2.fixture.js';

const skip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);

const STREAMS = Number(process.env.FLOOD_STREAMS ?? 40_000);
/** Half-open streams written per connection before the attacker looks at the answer. */
const BURST = 4_000;
/** The whole flood is bounded in time as well as in count. */
const FLOOD_BOUND_MS = 120_000;
const CAP = 32;
const PATH = '/join.API/IssueJoinTicket';

const requestHeaders = (extra: Array<[string, string]> = []) =>
  headerBlock([[':method', 'POST'], [':scheme', 'https'], [':path', PATH], [':authority', 'joinservice'], ['content-type', 'application/grpc'], ['te', 'trailers'], ...extra]);

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0);
}

const logBytes = (p: ServiceProcess) => Buffer.byteLength(p.allOutput());

describe('joinservice: 40,000 half-open HTTP/2 streams from an attested peer', { skip, timeout: 300_000 }, () => {
  let tpm: Swtpm;
  let issuer: QemuVtpmIssuer;
  let js: ServiceProcess;
  let port: number;

  before(async () => {
    tpm = await startSwtpm();
    const c = await tpm.client();
    await c.pcrExtend(4, [{ hashAlg: TPM_ALG.SHA256, digest: createHash('sha256').update('asterism image').digest() }]);
    const pcr4 = (await c.pcrRead([4], TPM_ALG.SHA256)).get(4)!.toString('hex');
    issuer = new QemuVtpmIssuer(() => tpm.client());
    js = startTsProcess('apps/joinservice/src/stream-flood.fixture.ts', [pcr4]);
    port = (await js.waitForLog((l) => l.msg === 'joinservice serving', 60_000)).port as number;
  });
  after(async () => {
    await js?.stop();
    await tpm?.stop();
  });

  /** An aTLS connection that passed attestation: a complete (empty, hence invalid) request with evidence is answered. */
  async function attested(): Promise<RawH2Session> {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: randomBytes(32).toString('base64'), ALPNProtocols: ['h2'], rejectUnauthorized: false, minVersion: 'TLSv1.3' });
    await new Promise((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
    const evidence = await issueExporterEvidence(issuer, socket);
    const session = new RawH2Session(socket);
    const probe = session.open(requestHeaders([[ATLS_EVIDENCE_METADATA_KEY, evidence.toString('base64')]]), Buffer.alloc(5));
    const started = Date.now();
    while (!session.outcomes.get(probe)!.answered && !session.closed && Date.now() - started < 30_000) await new Promise((r) => setTimeout(r, 20));
    assert.ok(session.outcomes.get(probe)!.answered, 'the probe request was answered');
    return session;
  }

  it('streams beyond the cap are refused, held ones are reset after the arrival deadline; RSS and log stay bounded', async () => {
    const rssBefore = rssKiB(js.child.pid!);
    const logBefore = logBytes(js);
    const linesBefore = js.jsonLogs().length;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssKiB(js.child.pid!))), 100);
    const half = requestHeaders();
    const figures = { sent: 0, connections: 0, answered: 0, refusedByGoaway: 0, resetNoError: 0, resetOther: 0, maxTakenPerConnection: 0 };
    const started = Date.now();
    try {
      while (figures.sent < STREAMS && Date.now() - started < FLOOD_BOUND_MS) {
        const session = await attested();
        figures.connections++;
        assert.equal(session.maxConcurrentStreams, CAP, 'the server announces its stream cap');
        const count = Math.min(BURST, STREAMS - figures.sent);
        session.openHalfOpen(half, count);
        figures.sent += count;
        await session.drain();
        const waitStart = Date.now();
        while (!session.closed && Date.now() - waitStart < 10_000) await new Promise((r) => setTimeout(r, 20));
        assert.ok(session.closed, 'a peer that ignores the cap loses the connection');
        const streams = [...session.outcomes.entries()].filter(([id]) => id > 1);
        const taken = streams.filter(([id]) => id <= (session.goaway?.lastStreamId ?? 0));
        figures.maxTakenPerConnection = Math.max(figures.maxTakenPerConnection, taken.length);
        figures.refusedByGoaway += streams.length - taken.length;
        for (const [, o] of taken) {
          if (o.answered) figures.answered++;
          if (o.rstCode === 0) figures.resetNoError++;
          else if (o.rstCode !== undefined) figures.resetOther++;
        }
      }
      // A peer that respects the cap holds CAP streams; each is answered and reset once 5 s pass without its request.
      const polite = await attested();
      const ids = polite.openHalfOpen(half, CAP - 1);
      const heldSince = Date.now();
      while (ids.some((id) => polite.outcomes.get(id)!.rstCode === undefined) && Date.now() - heldSince < 15_000) await new Promise((r) => setTimeout(r, 50));
      const heldMs = Date.now() - heldSince;
      assert.ok(ids.every((id) => polite.outcomes.get(id)!.answered && polite.outcomes.get(id)!.rstCode === 0), `every held stream is answered and reset (NO_ERROR): ${JSON.stringify(ids.map((id) => polite.outcomes.get(id)))} after ${heldMs} ms, closed ${polite.closed} ${JSON.stringify(polite.goaway)}`);
      assert.ok(heldMs >= 4_500, `held streams were reset after ${heldMs} ms, not before the 5 s arrival deadline`);
      await polite.close();
    } finally {
      clearInterval(sampler);
    }
    await new Promise((r) => setTimeout(r, 1000));
    const rssAfter = rssKiB(js.child.pid!);
    const logGrowth = logBytes(js) - logBefore;
    const lines = js.jsonLogs().slice(linesBefore);
    const report = {
      ...figures,
      floodSeconds: (Date.now() - started) / 1000,
      rssBeforeMiB: +(rssBefore / 1024).toFixed(1),
      rssPeakMiB: +(rssPeak / 1024).toFixed(1),
      rssAfterMiB: +(rssAfter / 1024).toFixed(1),
      logBytes: logGrowth,
      logLines: lines.length,
      errorLines: lines.filter((l) => l.level === 'error').length,
      loadavg: readFileSync('/proc/loadavg', 'utf8').trim(),
    };
    console.log(`[stream-flood] ${JSON.stringify(report)}`);

    assert.equal(figures.sent, STREAMS, 'all 40,000 streams were sent within the time bound');
    // Never more than the cap per connection: the rest were refused with the connection.
    assert.ok(figures.maxTakenPerConnection <= CAP, `${figures.maxTakenPerConnection} streams taken on one connection`);
    assert.ok(figures.refusedByGoaway >= STREAMS - figures.connections * CAP, `refused: ${figures.refusedByGoaway}`);
    // The log grows per connection (a handful of lines each), never per stream; nothing at error level.
    assert.equal(report.errorLines, 0, JSON.stringify(lines.filter((l) => l.level === 'error').slice(0, 3)));
    assert.ok(lines.length <= 6 * (figures.connections + 1), `${lines.length} log lines for ${figures.connections + 1} connections`);
    assert.ok(logGrowth < 2_000 * (figures.connections + 1), `${logGrowth} log bytes`);
    // Bounded memory: the 40,000 streams cost less than 64 MiB at peak (the unbounded server grew by 160 MB while holding them).
    assert.ok(rssPeak - rssBefore < 64 * 1024, `RSS grew by ${((rssPeak - rssBefore) / 1024).toFixed(1)} MiB`);
  });
});
