export { WIRE_TYPE, WireError, WireReader, WireWriter } from './wire.js';
export { PROTOBUF_MAGIC, PROTOBUF_MEDIA_TYPE, decodeEnvelope, encodeEnvelope, type ProtobufEnvelope } from './envelope.js';
export { decodeMessage, goDuration, type MessageLookup, type ProtoFieldFacts, type ProtoMessageFacts } from './decode.js';
export { encodeMessage } from './encode.js';
export {
  protobufMessageOf,
  decodeProtobufObject,
  encodeProtobufObject,
  encodeProtobufList,
  encodeProtobufListItem,
  encodeProtobufWatchEvent,
} from './objects.js';
