/**
 * One attestation config for both node kinds of a cluster with VM nodes
 * (docs/adr/0039-vm-nodes-local-cluster.md): the node image's predicted PCRs (tools/image
 * `predict`) are the cluster's expected measurements, and the namespace nodes' scripted measured
 * boot replays the image's predicted events (the same SHA-256 digests, in the firmware's and the
 * UKI stub's order) instead of fixed labels. A namespace node then attests exactly as a VM of
 * that image does, and a VM booted from anything else is refused, naming its PCR.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { attestationConfigJson, predictPcrs, readImage } from '@asterism/image';

/** PCRs a namespace node replays (PCR 5 too: warn-only, but it keeps the verdicts clean). */
const REPLAYED = [4, 5, 9, 11] as const;

/** What a cluster with VM nodes needs of its image's prediction. */
export interface ImageMeasurements {
  /** The qemu-vtpm attestation config (`{"measurements": ...}`) of the image. */
  configJson: string;
  /** Per PCR, the digests a namespace node's simulated firmware extends, in order. */
  events: Map<number, Buffer[]>;
}

/** Reads the image's GPT and UKI and predicts its measurements. */
export async function imageMeasurements(image: string): Promise<ImageMeasurements> {
  const { uki, gpt } = await readImage(image);
  const { pcrs } = predictPcrs(uki, gpt);
  const events = new Map<number, Buffer[]>();
  for (const index of REPLAYED) {
    const p = pcrs.find((x) => x.index === index);
    if (!p) throw new Error(`the prediction of ${image} has no PCR ${index}`);
    events.set(index, [...p.digests]);
  }
  return { configJson: `${attestationConfigJson(pcrs)}\n`, events };
}

/** Writes the events for the cluster's namespace nodes (their reboots replay them too). */
export async function writeBootEvents(path: string, events: ReadonlyMap<number, readonly Buffer[]>): Promise<void> {
  const body = Object.fromEntries([...events].map(([pcr, ds]) => [String(pcr), ds.map((d) => d.toString('hex'))]));
  await writeFile(path, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
}

/** The events a cluster's namespace nodes replay: the file's (a cluster with VM nodes) or undefined (fixed labels). */
export async function readBootEvents(path: string): Promise<Map<number, Buffer[]> | undefined> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const body = JSON.parse(text) as Record<string, string[]>;
  return new Map(Object.entries(body).map(([pcr, ds]) => [Number(pcr), ds.map((d) => Buffer.from(d, 'hex'))]));
}

/** `measureBoot` options for a node of this cluster: the image's events when the cluster has them. */
export async function bootEventsOf(layout: { bootEventsFile: string }): Promise<{ events?: Map<number, Buffer[]> }> {
  const events = await readBootEvents(layout.bootEventsFile);
  return events ? { events } : {};
}
