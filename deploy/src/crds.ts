/**
 * The joinservice chart ships the JoiningNode and NodeVersion CRDs in `crds/`. They are rendered
 * from the single definition in libs/k8s (JOINING_NODE_CRD, NODE_VERSION_CRD) in the API's wire
 * form (`x-kubernetes-*` keys), so the chart and the local cluster can never disagree; a unit test
 * compares the committed files with the lib.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import YAML from 'yaml';
import { JOINING_NODE_CRD, NODE_VERSION_CRD } from '@asterism/k8s';
import { REPO_ROOT } from './bundle.js';

/** Folder of the chart's CRDs. */
export const CRD_DIR = join(REPO_ROOT, 'deploy', 'charts', 'joinservice', 'crds');

const HEADER = '# Generated from libs/k8s/src/crds.ts by `npx nx run deploy:gen-crds`; do not edit.\n';

/** File name -> CRD object in wire form. */
export function libCrds(): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const crd of [JOINING_NODE_CRD, NODE_VERSION_CRD]) {
    out.set(`${crd.metadata!.name}.yaml`, YAML.parse(k8s.dumpYaml(crd)) as Record<string, unknown>);
  }
  return out;
}

/** Writes the CRD files; returns their paths. */
export function writeChartCrds(dir = CRD_DIR): string[] {
  const paths: string[] = [];
  for (const [file, obj] of libCrds()) {
    const path = join(dir, file);
    writeFileSync(path, HEADER + YAML.stringify(obj));
    paths.push(path);
  }
  return paths;
}

/** Parses the committed CRD files (file name -> object). */
export function readChartCrds(dir = CRD_DIR): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const file of libCrds().keys()) out.set(file, YAML.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>);
  return out;
}
