import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { certificateRefreshAt, signedDataRefreshAt } from './refresh.js';

const t = (iso: string) => new Date(iso).getTime();
const iso = (ms: number) => new Date(ms).toISOString();

describe('refresh points', () => {
  const signed: Array<[string, string, string, string]> = [
    ['monthly TCB info: the midpoint (earlier than 7 days before)', '2023-06-18T08:00:00Z', '2023-07-18T08:00:00Z', '2023-07-03T08:00:00.000Z'],
    ['yearly CRL: the midpoint', '2023-04-03T00:00:00Z', '2024-04-02T00:00:00Z', '2023-10-02T12:00:00.000Z'],
    ['a 10-day window: its midpoint is later than 7 days before its end, so 7 days before', '2023-06-01T00:00:00Z', '2023-06-11T00:00:00Z', '2023-06-04T00:00:00.000Z'],
    ['a 5-day window: 7 days before would precede the issue date, so at once', '2023-06-01T00:00:00Z', '2023-06-06T00:00:00Z', '2023-06-01T00:00:00.000Z'],
  ];
  for (const [name, issued, next, want] of signed) it(`signed data, ${name}`, () => assert.equal(iso(signedDataRefreshAt(t(issued), t(next))), want));

  const certs: Array<[string, string, string, string]> = [
    ['a 7-year VCEK: 30 days before it expires', '2023-08-30T00:00:00Z', '2030-08-30T00:00:00Z', '2030-07-31T00:00:00.000Z'],
    ['a 20-day certificate: at once', '2023-08-01T00:00:00Z', '2023-08-21T00:00:00Z', '2023-08-01T00:00:00.000Z'],
  ];
  for (const [name, from, to, want] of certs) it(`certificate, ${name}`, () => assert.equal(iso(certificateRefreshAt(t(from), t(to))), want));
});
