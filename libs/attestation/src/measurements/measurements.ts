/**
 * The reference's `measurements.M` (docs/protocol/measurements.md): register index -> expected measurement. A Map
 * subclass so the usual Map API works; indices are checked to be uint32 on every `set`.
 */
import { type Measurement, measurementsError } from './measurement.js';

/** Expected measurements by register index (PCR for vTPM variants; MRTD/RTMR0..3 for TDX). */
export class Measurements extends Map<number, Measurement> {
  /** Builds from `[index, measurement]` pairs or a plain `{index: measurement}` record. */
  static of(entries: Iterable<readonly [number, Measurement]> | Readonly<Record<number, Measurement>>): Measurements {
    const m = new Measurements();
    const list = Symbol.iterator in entries ? entries : Object.entries(entries).map(([k, v]) => [Number(k), v] as const);
    for (const [k, v] of list as Iterable<readonly [number, Measurement]>) m.set(k, v);
    return m;
  }

  /** Rejects indices that are not uint32 (the reference's map key type). */
  override set(index: number, measurement: Measurement): this {
    if (!Number.isInteger(index) || index < 0 || index > 0xffffffff) {
      throw measurementsError(`invalid measurement index ${String(index)}`, { index: String(index), reason: 'index' });
    }
    return super.set(index, measurement);
  }

  /** Indices in ascending numeric order. */
  sortedIndices(): number[] {
    return [...this.keys()].sort((a, b) => a - b);
  }

  /** Overwrites or adds every entry of `other`, keeping entries `other` does not mention. */
  copyFrom(other: ReadonlyMap<number, Measurement>): this {
    for (const [k, v] of other) this.set(k, v);
    return this;
  }

  /** An independent copy (the expected bytes are copied too). */
  copy(): Measurements {
    const out = new Measurements();
    for (const [k, v] of this) out.set(k, { expected: Buffer.from(v.expected), validationOpt: v.validationOpt });
    return out;
  }

  /** Same indices, and per index the same bytes and the same validation option. */
  equalTo(other: ReadonlyMap<number, Measurement>): boolean {
    if (this.size !== other.size) return false;
    for (const [k, v] of this) {
      const o = other.get(k);
      if (!o || !v.expected.equals(o.expected) || v.validationOpt !== o.validationOpt) return false;
    }
    return true;
  }

  /** Indices that are enforced, ascending. */
  getEnforced(): number[] {
    return this.sortedIndices().filter((i) => this.get(i)!.validationOpt === 'Enforce');
  }

  /**
   * Makes exactly the listed indices Enforce and all others WarnOnly. Listing an index that has
   * no measurement fails and leaves the map unchanged.
   */
  setEnforced(enforced: Iterable<number>): this {
    const want = new Set(enforced);
    for (const i of want) {
      if (!this.has(i)) throw measurementsError(`measurement ${i} not in list, but set to enforced`, { index: i, reason: 'unknown index' });
    }
    for (const [k, v] of this) this.set(k, { expected: v.expected, validationOpt: want.has(k) ? 'Enforce' : 'WarnOnly' });
    return this;
  }

  /**
   * A plain-object view for `JSON.stringify` and logs. Integer-like keys come out in numeric
   * order there; use `encodeMeasurementsJson` for the reference's exact bytes.
   */
  toJSON(): Record<string, { expected: string; warnOnly: boolean }> {
    const out: Record<string, { expected: string; warnOnly: boolean }> = {};
    for (const i of this.sortedIndices()) {
      const m = this.get(i)!;
      out[String(i)] = { expected: m.expected.toString('hex'), warnOnly: m.validationOpt === 'WarnOnly' };
    }
    return out;
  }
}
