import { describe, expect, it } from 'vitest';
import { buildFacts, FactsError, type ModuleFiles } from '../../../../scripts/generate-api-facts.mjs';
import { decodeMessage, type MessageLookup } from '../protobuf/decode.js';
import { WIRE_TYPE, WireWriter } from '../protobuf/wire.js';
import {
  apiFactsSources,
  enumValues,
  fieldByJsonName,
  fieldByNumber,
  messageFacts,
  messageNames,
  messagesOfPackage,
  packageFacts,
  packageOfGroupVersion,
} from './facts.js';

const CORE = 'k8s.io.api.core.v1';
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

describe('the committed API facts table', () => {
  it('comes from one release of k8s.io/api, apimachinery, apiextensions-apiserver and kube-aggregator', () => {
    const sources = apiFactsSources();
    expect(sources.map((source) => source.module)).toEqual(['k8s.io/api', 'k8s.io/apiextensions-apiserver', 'k8s.io/apimachinery', 'k8s.io/kube-aggregator']);
    // The kube-aggregator snapshot stops at v0.36.2; its APIService types did not change in the patch release.
    expect(sources.map((source) => source.tag)).toEqual(['v0.36.3', 'v0.36.3', 'v0.36.3', 'v0.36.2']);
    for (const source of sources) expect(source.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  // Exact counts for the tag above: a regeneration that drops messages shows here; a new release updates them.
  it('holds every message of that release', () => {
    const names = messageNames();
    expect(names).toHaveLength(1224);
    expect(names.reduce((sum, name) => sum + (messageFacts(name)?.fields.length ?? 0), 0)).toBe(4211);
    expect([...names].sort()).toEqual(names);
  });

  it('numbers Pod fields as upstream does', () => {
    const pod = messageFacts(`${CORE}.Pod`);
    expect(pod?.package).toBe(CORE);
    expect(pod?.fields.map(({ name, number, type }) => [name, number, type])).toEqual([
      ['metadata', 1, `${META}.ObjectMeta`],
      ['spec', 2, `${CORE}.PodSpec`],
      ['status', 3, `${CORE}.PodStatus`],
    ]);
    expect(fieldByNumber(`${CORE}.Pod`, 2)?.name).toBe('spec');
    expect(fieldByJsonName(`${CORE}.Pod`, 'status')?.number).toBe(3);
    expect(fieldByJsonName(`${CORE}.Pod`, 'nope')).toBeUndefined();
    expect(messageFacts(`${CORE}.Nope`)).toBeUndefined();
  });

  it('keeps list markers: Container.ports is a map list keyed by containerPort and protocol', () => {
    expect(fieldByJsonName(`${CORE}.Container`, 'ports')).toEqual({
      name: 'ports',
      number: 6,
      type: `${CORE}.ContainerPort`,
      repeated: true,
      omitEmpty: true,
      optional: true,
      listType: 'map',
      listMapKeys: ['containerPort', 'protocol'],
      patchMergeKey: 'containerPort',
      patchStrategy: 'merge',
    });
    const containers = fieldByJsonName(`${CORE}.PodSpec`, 'containers');
    expect(containers).toMatchObject({ number: 2, repeated: true, listType: 'map', listMapKeys: ['name'], patchMergeKey: 'name', patchStrategy: 'merge' });
    expect(containers?.optional).toBeUndefined();
    expect(fieldByJsonName(`${CORE}.PodSpec`, 'volumes')?.patchStrategy).toBe('merge,retainKeys');
    expect(fieldByJsonName(`${META}.ObjectMeta`, 'finalizers')).toMatchObject({ repeated: true, listType: 'set', patchStrategy: 'merge' });
  });

  it('records maps with their key and value types: Secret.data is map<string, bytes>', () => {
    expect(fieldByJsonName(`${CORE}.Secret`, 'data')).toMatchObject({ number: 2, type: 'bytes', map: { key: 'string', value: 'bytes' } });
    expect(fieldByJsonName(`${CORE}.Secret`, 'data')?.repeated).toBeUndefined();
    expect(fieldByJsonName(`${CORE}.ConfigMap`, 'binaryData')?.map).toEqual({ key: 'string', value: 'bytes' });
  });

  it('has ObjectMeta as upstream numbers it', () => {
    const fields = messageFacts(`${META}.ObjectMeta`)?.fields.map(({ name, number }) => `${number}:${name}`);
    expect(fields).toEqual([
      '1:name',
      '2:generateName',
      '3:namespace',
      '4:selfLink',
      '5:uid',
      '6:resourceVersion',
      '7:generation',
      '8:creationTimestamp',
      '9:deletionTimestamp',
      '10:deletionGracePeriodSeconds',
      '11:labels',
      '12:annotations',
      '13:ownerReferences',
      '14:finalizers',
      '17:managedFields',
    ]);
    expect(fieldByJsonName(`${META}.ObjectMeta`, 'creationTimestamp')).toMatchObject({ type: `${META}.Time`, omitEmpty: true, omitZero: true });
    expect(fieldByJsonName(`${META}.ObjectMeta`, 'deletionTimestamp')).toMatchObject({ pointer: true, omitEmpty: true });
    expect(fieldByJsonName(`${CORE}.Container`, 'resources')?.pointer).toBeUndefined();
    expect(fieldByJsonName(`${META}.ObjectMeta`, 'ownerReferences')).toMatchObject({ listType: 'map', listMapKeys: ['uid'], patchMergeKey: 'uid' });
  });

  it('has the special apimachinery messages the codec treats as JSON scalars', () => {
    for (const name of [
      'k8s.io.apimachinery.pkg.api.resource.Quantity',
      'k8s.io.apimachinery.pkg.util.intstr.IntOrString',
      `${META}.Time`,
      `${META}.MicroTime`,
      `${META}.Duration`,
      `${META}.FieldsV1`,
      'k8s.io.apimachinery.pkg.runtime.RawExtension',
      'k8s.io.apimachinery.pkg.runtime.Unknown',
    ]) {
      expect(messageFacts(name), name).toBeDefined();
    }
    expect(messageFacts(`${META}.Time`)?.fields.map((field) => field.name)).toEqual(['seconds', 'nanos']);
    expect(fieldByNumber('k8s.io.apimachinery.pkg.runtime.RawExtension', 1)).toMatchObject({ type: 'bytes', notInJson: true });
  });

  it('places messages in their group version', () => {
    expect(messageFacts('k8s.io.api.apps.v1.Deployment')?.package).toBe('k8s.io.api.apps.v1');
    expect(packageFacts('k8s.io.api.apps.v1')).toEqual({
      name: 'k8s.io.api.apps.v1',
      module: 'k8s.io/api',
      path: 'apps/v1',
      goPackage: 'k8s.io/api/apps/v1',
      group: 'apps',
      version: 'v1',
    });
    expect(packageOfGroupVersion('', 'v1')?.name).toBe(CORE);
    expect(packageOfGroupVersion('rbac.authorization.k8s.io', 'v1')?.path).toBe('rbac/v1');
    expect(packageOfGroupVersion('meta.k8s.io', 'v1')?.module).toBe('k8s.io/apimachinery');
    expect(packageFacts('k8s.io.apimachinery.pkg.api.resource')?.group).toBeUndefined();
    expect(messagesOfPackage('k8s.io.api.apps.v1').map((message) => message.name)).toContain('k8s.io.api.apps.v1.StatefulSet');
  });

  it('uses JSON names where the proto names differ, and knows inlined members', () => {
    expect(fieldByJsonName('k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration', 'webhooks')).toMatchObject({
      protoName: 'Webhooks',
      number: 2,
    });
    expect(fieldByJsonName('k8s.io.api.networking.v1.IngressClassParametersReference', 'apiGroup')?.protoName).toBe('aPIGroup');
    expect(fieldByNumber(`${CORE}.Volume`, 2)).toMatchObject({ name: 'volumeSource', inline: true });
    expect(fieldByJsonName(`${CORE}.Volume`, 'volumeSource')).toBeUndefined();
    expect(fieldByJsonName(`${CORE}.Volume`, 'emptyDir')?.type).toBe(`${CORE}.EmptyDirVolumeSource`);
    expect(fieldByJsonName(`${CORE}.EphemeralContainer`, 'image')?.number).toBe(2);
  });

  it('links string fields to their +enum values and resolves defaults', () => {
    expect(fieldByJsonName(`${CORE}.PodSpec`, 'restartPolicy')?.enum).toBe(`${CORE}.RestartPolicy`);
    expect(enumValues(`${CORE}.RestartPolicy`)).toEqual(['Always', 'Never', 'OnFailure']);
    expect(fieldByJsonName('k8s.io.api.discovery.v1.EndpointPort', 'protocol')?.enum).toBe(`${CORE}.Protocol`);
    // v1beta1's ReinvocationPolicyType is a Go alias of v1's.
    expect(fieldByJsonName('k8s.io.api.admissionregistration.v1beta1.MutatingWebhook', 'reinvocationPolicy')?.enum).toBe(
      'k8s.io.api.admissionregistration.v1.ReinvocationPolicyType',
    );
    expect(enumValues('k8s.io.api.networking.v1.PathType')).toEqual(['Exact', 'ImplementationSpecific', 'Prefix']);
    expect(fieldByJsonName(`${CORE}.ContainerPort`, 'protocol')).toMatchObject({ enum: `${CORE}.Protocol`, default: 'TCP' });
    expect(fieldByJsonName(`${CORE}.AzureDiskVolumeSource`, 'cachingMode')?.default).toBe('ReadWrite');
  });

  it('keeps the message markers that describe the API', () => {
    expect(messageFacts('k8s.io.api.certificates.v1.CertificateSigningRequest')?.supportsSubresources).toEqual(['/status', '/approval']);
    expect(messageFacts('k8s.io.api.authentication.v1.ExtraValue')).toMatchObject({ sliceWrapper: true, fields: [{ name: 'items', repeated: true }] });
    expect(messageFacts('k8s.io.api.discovery.v1.EndpointPort')?.structType).toBe('atomic');
  });

  it('hands out frozen records', () => {
    const pod = messageFacts(`${CORE}.Pod`);
    expect(Object.isFrozen(pod) && Object.isFrozen(pod?.fields) && Object.isFrozen(pod?.fields[0])).toBe(true);
  });

  it('serves as the protobuf codec’s message lookup', () => {
    const lookup: MessageLookup = messageFacts;
    const meta = new WireWriter().tag(1, WIRE_TYPE.LENGTH_DELIMITED).string('web').finish();
    const pod = new WireWriter().tag(1, WIRE_TYPE.LENGTH_DELIMITED).bytesField(meta).finish();
    expect(decodeMessage(lookup, `${CORE}.Pod`, pod)).toEqual({ metadata: { name: 'web' } });
  });
});

// A made-up API written for this test, not taken from upstream: prose and markers mixed in the comments.
const FIXTURE_PROTO = `
syntax = "proto2";

package example.io.api.garden.v1;

import "example.io/apimachinery/pkg/apis/meta/v1/generated.proto";

option go_package = "example.io/api/garden/v1";

// Greenhouse keeps marmalade jars warm through the Zanzibar winter.
// +genclient
// +k8s:supportsSubresource="/status"
message Greenhouse {
  // Every jar sits on a shelf; see https://example.invalid/shelves for the
  // +-------+-------+ table of shelf sizes. optional and required are just words here.
  // +optional
  optional example.io.apimachinery.pkg.apis.meta.v1.Meta metadata = 1;

  // Jars listed by their lid colour, because quokkas insist.
  // +listType=map
  // +listMapKey=lid
  // +listMapKey=size
  // +patchMergeKey=lid
  // +patchStrategy=merge
  // +k8s:alpha(since: "1.99")=+k8s:maxItems=7
  // +featureGate=JarTracking,LidColours
  repeated Jar jars = 2;

  // Labels of the greenhouse, polished nightly.
  // +mapType=granular
  map<string, string> labels = 3;

  // Season, as the almanac of Wobbleton says.
  // +default=ref(SeasonSpring)
  // +required
  optional string season = 4;

  optional Shelf shelf = 5;

  optional bytes Raw = 6;
}

// Jar: an ordinary jar. Nothing to see.
// +structType=atomic
message Jar {
  optional string lid = 1;

  // +default=3
  optional int32 size = 2;
}

// Shelf is embedded.
message Shelf {
  optional string wood = 1;
}

// Seeds wraps a Go slice.
// +protobuf.nullable=true
message Seeds {
  // items, individually.
  repeated string items = 1;
}
`;

const META_FIXTURE_PROTO = `
syntax = "proto2";
package example.io.apimachinery.pkg.apis.meta.v1;
option go_package = "example.io/apimachinery/pkg/apis/meta/v1";
// Meta holds a name, nothing more.
message Meta {
  // +optional
  optional string name = 1;
}
`;

const FIXTURE_GO = `package v1

import (
	metav1 "example.io/apimachinery/pkg/apis/meta/v1"
)

const GroupName = "garden.example.io"

// Greenhouse keeps marmalade jars warm through the Zanzibar winter.
type Greenhouse struct {
	metav1.Meta \`json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"\`
	Jars []Jar \`json:"jars,omitempty" protobuf:"bytes,2,rep,name=jars"\`
	Labels map[string]string \`json:"labels" protobuf:"bytes,3,rep,name=labels"\`
	Season *Season \`json:"season,omitempty" protobuf:"bytes,4,opt,name=season,casttype=Season"\`
	Shelf \`json:",inline" protobuf:"bytes,5,opt,name=shelf"\`
	Raw []byte \`json:"-" protobuf:"bytes,6,opt,name=Raw"\`
}

// Season names a season of the almanac of Wobbleton.
// +enum
type Season string

const (
	// SeasonSpring is when the quokkas wake.
	SeasonSpring Season = "Spring"
	SeasonAutumn        = Season("Autumn")
	SeasonWinter Season = SeasonWinterAlias
)

const SeasonWinterAlias = "Winter"

type Jar struct {
	Lid string \`json:"lid" protobuf:"bytes,1,opt,name=lid"\`
	Size int32 \`json:"size,omitempty" protobuf:"varint,2,opt,name=size"\`
}

type Shelf struct {
	Wood string \`json:"wood,omitempty" protobuf:"bytes,1,opt,name=wood"\`
}
`;

function fixture(proto = FIXTURE_PROTO): ModuleFiles[] {
  return [
    {
      module: 'example.io/api',
      tag: 'v0.0.1',
      commit: 'a'.repeat(40),
      protoFiles: [{ path: 'garden/v1/generated.proto', text: proto }],
      goFiles: [{ path: 'garden/v1/types.go', text: FIXTURE_GO }],
    },
    {
      module: 'example.io/apimachinery',
      tag: 'v0.0.1',
      commit: 'b'.repeat(40),
      protoFiles: [{ path: 'pkg/apis/meta/v1/generated.proto', text: META_FIXTURE_PROTO }],
      goFiles: [],
    },
  ];
}

describe('the generator (scripts/generate-api-facts.mjs)', () => {
  const { facts, stats } = buildFacts(fixture());
  const GARDEN = 'example.io.api.garden.v1';

  it('writes messages, fields, numbers, types and the kept markers', () => {
    expect(Object.keys(facts.messages)).toEqual([
      `${GARDEN}.Greenhouse`,
      `${GARDEN}.Jar`,
      `${GARDEN}.Seeds`,
      `${GARDEN}.Shelf`,
      'example.io.apimachinery.pkg.apis.meta.v1.Meta',
    ]);
    expect(facts.messages[`${GARDEN}.Greenhouse`]).toEqual({
      package: GARDEN,
      supportsSubresources: ['/status'],
      fields: [
        { name: 'metadata', number: 1, type: 'example.io.apimachinery.pkg.apis.meta.v1.Meta', omitEmpty: true, optional: true },
        {
          name: 'jars',
          number: 2,
          type: `${GARDEN}.Jar`,
          repeated: true,
          omitEmpty: true,
          listType: 'map',
          listMapKeys: ['lid', 'size'],
          patchMergeKey: 'lid',
          patchStrategy: 'merge',
          featureGates: ['JarTracking', 'LidColours'],
        },
        { name: 'labels', number: 3, type: 'string', map: { key: 'string', value: 'string' }, mapType: 'granular' },
        { name: 'season', number: 4, type: 'string', pointer: true, omitEmpty: true, enum: `${GARDEN}.Season`, required: true, default: 'Spring' },
        { name: 'shelf', number: 5, type: `${GARDEN}.Shelf`, inline: true },
        { name: 'Raw', number: 6, type: 'bytes', notInJson: true },
      ],
    });
    expect(facts.messages[`${GARDEN}.Jar`]).toEqual({
      package: GARDEN,
      structType: 'atomic',
      fields: [
        { name: 'lid', number: 1, type: 'string' },
        { name: 'size', number: 2, type: 'int32', omitEmpty: true, default: 3 },
      ],
    });
    expect(facts.messages[`${GARDEN}.Seeds`]).toMatchObject({ sliceWrapper: true });
    expect(facts.enums).toEqual({ [`${GARDEN}.Season`]: ['Autumn', 'Spring', 'Winter'] });
    expect(facts.packages[GARDEN]).toEqual({
      module: 'example.io/api',
      path: 'garden/v1',
      goPackage: 'example.io/api/garden/v1',
      group: 'garden.example.io',
      version: 'v1',
    });
    expect(facts.packages['example.io.apimachinery.pkg.apis.meta.v1'].group).toBeUndefined();
    expect(stats).toMatchObject({ messages: 5, fields: 11, inline: 1, enumFields: 1, enums: 1 });
  });

  it('never lets comment prose into the table', () => {
    const text = JSON.stringify(facts);
    for (const word of [
      'marmalade',
      'Zanzibar',
      'quokka',
      'Wobbleton',
      'almanac',
      'example.invalid',
      'polished',
      'individually',
      'Nothing',
      '-----',
      'alpha',
      'maxItems',
      'genclient',
    ]) {
      expect(text).not.toContain(word);
    }
  });

  it('is deterministic', () => {
    expect(JSON.stringify(buildFacts(fixture()).facts)).toBe(JSON.stringify(facts));
  });

  it('rejects a kept marker whose value has the wrong shape, naming the field', () => {
    const bad = FIXTURE_PROTO.replace('// +listType=map', '// +listType=a list of jars');
    expect(() => buildFacts(fixture(bad))).toThrow(FactsError);
    expect(() => buildFacts(fixture(bad))).toThrow(/Greenhouse\.jars: \+listType has an unexpected value/);
  });

  it('rejects a type it cannot resolve', () => {
    expect(() => buildFacts(fixture(FIXTURE_PROTO.replace('repeated Jar jars', 'repeated Pickle jars')))).toThrow(/resolving types/);
  });
});
