/**
 * Generated chart files are current: the CRDs in charts/joinservice/crds/ equal libs/k8s's
 * JOINING_NODE_CRD / NODE_VERSION_CRD, and every values.schema.json equals its generator.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { registerVariant, Variant } from '@asterism/attestation';
import { secondDummyVariant } from '@asterism/attestation/testing';
import { CRD_DIR, libCrds, readChartCrds } from './crds.js';
import { committedSchemaText, schemaText, valuesSchemas } from './schemas.js';

describe('chart CRDs', () => {
  it('are exactly the CRDs of libs/k8s (regenerate with `npx nx run deploy:gen-crds`)', () => {
    const lib = libCrds();
    assert.deepEqual(readChartCrds(), lib);
    assert.deepEqual(readdirSync(CRD_DIR).sort(), [...lib.keys()].sort(), 'no other CRD files');
  });

  it('are in wire form (x-kubernetes-* keys, not the client model names)', () => {
    const nv = JSON.stringify(readChartCrds().get('nodeversions.update.edgeless.systems.yaml'));
    assert.match(nv, /"x-kubernetes-preserve-unknown-fields":true/);
    assert.doesNotMatch(nv, /x_kubernetes/);
  });
});

describe('values schemas', () => {
  for (const [chart, schema] of valuesSchemas()) {
    it(`${chart}/values.schema.json is current (regenerate with \`npx nx run deploy:gen-schemas\`)`, () => {
      assert.equal(committedSchemaText(chart), schemaText(schema));
    });
  }

  it('every object schema rejects unknown keys', () => {
    const open: string[] = [];
    const walk = (s: unknown, path: string) => {
      if (!s || typeof s !== 'object') return;
      const o = s as Record<string, unknown>;
      if (o.type === 'object' && o.properties && o.additionalProperties !== false) open.push(path);
      for (const [k, v] of Object.entries(o)) walk(v, `${path}/${k}`);
    };
    for (const [chart, schema] of valuesSchemas()) walk(schema, chart);
    assert.deepEqual(open, []);
  });
});

describe('values schemas and the variant table', () => {
  const variantEnums = () => {
    const schemas = valuesSchemas();
    const enumOf = (chart: string) => ((schemas.get(chart)!.properties as Record<string, { enum: string[] }>).attestationVariant!).enum;
    return [enumOf('joinservice'), enumOf('verificationservice')];
  };

  it('attestationVariant offers exactly the variants of the table', () => {
    for (const e of variantEnums()) assert.deepEqual(e, Variant.all().map(String));
  });

  it('a variant registered in the table (second-dummy, test-only) is offered without a change here', () => {
    const unregister = registerVariant(secondDummyVariant);
    try {
      for (const e of variantEnums()) assert.ok(e.includes('second-dummy'));
    } finally {
      unregister();
    }
  });
});
