import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeProtobufObject, encodeProtobufObject } from './objects.js';

// Upstream's own encodings (k8s.io/api testdata/HEAD, a representative set exported by
// scripts/export-protobuf-fixtures.mjs; `--check-all` there runs every served kind): every field of the kind
// filled in, as .pb beside the same object as .json.
const DIR = new URL('../../test-data/protobuf/', import.meta.url);
const names = readdirSync(DIR)
  .filter((file) => file.endsWith('.pb'))
  .map((file) => file.slice(0, -3))
  .sort();

describe('upstream protobuf fixtures', () => {
  it('are there to test', () => {
    expect(names.length).toBeGreaterThanOrEqual(13);
  });

  it.each(names)('%s decodes to its .json twin, and encodes back to the same object', (name) => {
    const expected = JSON.parse(readFileSync(new URL(`${name}.json`, DIR), 'utf8'));
    const decoded = decodeProtobufObject(readFileSync(new URL(`${name}.pb`, DIR)));
    expect(decoded).toEqual(expected);
    expect(decodeProtobufObject(encodeProtobufObject(expected))).toEqual(expected);
  });
});
