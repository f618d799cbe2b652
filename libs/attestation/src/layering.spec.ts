/**
 * The import structure of this library (docs/adr/0035-variant-descriptor-table.md): no import
 * cycles, and no module imports a module of a higher layer. Imports are read with the TypeScript
 * compiler's pre-processor (type-only imports count too). Specs and fixtures are outside the rule.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

const SRC = import.meta.dirname;

/** Layers, lowest first; a module may import its own layer (without cycles) and lower ones. */
const LAYERS: ReadonlyArray<readonly [name: string, member: (file: string) => boolean]> = [
  ['core', (f) => /^(errors|go-json|interfaces|variant|extra-data)\.ts$/.test(f) || /^(measurements|config|collateral|tsm)\//.test(f)],
  ['technology', (f) => /^(vtpm|snp|tdx|azure|aws|gcp|cloud)\//.test(f)],
  ['descriptor contract', (f) => f === 'variants/descriptor.ts'],
  ['variants', (f) => /^variants\/[a-z0-9-]+\.ts$/.test(f) && f !== 'variants/table.ts' && f !== 'variants/descriptor.ts'],
  ['table', (f) => f === 'variants/table.ts'],
  ['services', (f) => /^(attestation-config|measurement-defaults|choose|ak-digest)\.ts$/.test(f)],
  ['entry points', (f) => /^(index|parsers|testing)\.ts$/.test(f)],
];

const isTestOnly = (f: string) => f.endsWith('.spec.ts') || /fixture/.test(f) || f === 'testing.ts' || f.startsWith('testing/');

function productModules(dir = SRC): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return productModules(p);
    const rel = relative(SRC, p);
    return rel.endsWith('.ts') && !isTestOnly(rel) ? [rel] : [];
  });
}

/** Relative imports of `file`, as paths relative to src/. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(join(SRC, file), 'utf8'), true, true);
  return info.importedFiles
    .map((i) => i.fileName)
    .filter((s) => s.startsWith('.'))
    .map((s) => normalize(join(dirname(file), s.replace(/\.js$/, '.ts'))));
}

function layerOf(file: string): number {
  const i = LAYERS.findIndex(([, member]) => member(file));
  assert.ok(i >= 0, `${file} belongs to no layer: add it to LAYERS in layering.spec.ts`);
  return i;
}

/** Strongly connected components with more than one module (Tarjan). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('libs/attestation import structure', () => {
  const graph = new Map(productModules().map((f) => [f, importsOf(f)] as const));

  it('reads every product module (sanity: the table and a variant are among them)', () => {
    assert.ok(graph.has('variants/table.ts') && graph.has('variants/qemu-vtpm.ts') && graph.size > 100, `${graph.size} modules`);
  });

  it('has no import cycles', () => {
    assert.deepEqual(cycles(graph), []);
  });

  it('has no upward imports (a module imports only its own layer or lower ones)', () => {
    const upward = [...graph].flatMap(([f, deps]) => deps.filter((d) => graph.has(d) && layerOf(d) > layerOf(f)).map((d) => `${f} (${LAYERS[layerOf(f)]![0]}) -> ${d} (${LAYERS[layerOf(d)]![0]})`));
    assert.deepEqual(upward, []);
  });

  it('variant modules are independent: none imports another variant module or the table', () => {
    const isVariant = (f: string) => LAYERS[3]![1](f);
    const crossed = [...graph].flatMap(([f, deps]) => (isVariant(f) ? deps.filter((d) => isVariant(d) || d === 'variants/table.ts').map((d) => `${f} -> ${d}`) : []));
    assert.deepEqual(crossed, []);
  });
});
