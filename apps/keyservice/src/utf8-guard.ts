import { isUtf8 } from 'node:buffer';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import * as grpc from '@grpc/grpc-js';

/** Set on a decoded request whose string field held bytes that are not UTF-8. */
const INVALID_UTF8 = Symbol('invalidUtf8');

/**
 * Protobuf strings must be valid UTF-8, but the generated decoder replaces bad sequences with
 * U+FFFD, so `ff`, `fe` and U+FFFD would all name the same data key. This wraps a service
 * definition's request decoders: the top-level string fields listed per method are checked on the
 * raw bytes, and a request with bad bytes is marked (see {@link invalidUtf8Field}) so the handler
 * refuses it with InvalidArgument; throwing in the decoder would turn into Internal.
 */
export function guardUtf8<S extends grpc.ServiceDefinition>(service: S, stringFields: Partial<Record<keyof S, readonly number[]>>): S {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, method] of Object.entries(service)) {
    const fields = stringFields[name as keyof S];
    out[name] = !fields
      ? method
      : {
          ...method,
          requestDeserialize: (buf: Buffer) => {
            const req = method.requestDeserialize(buf) as Record<PropertyKey, unknown>;
            const bad = firstInvalidUtf8Field(buf, fields);
            if (bad !== undefined && req && typeof req === 'object') req[INVALID_UTF8] = bad;
            return req;
          },
        };
  }
  return out as S;
}

/** The field number of a string field that was not UTF-8, if the request was decoded by a guarded service. */
export function invalidUtf8Field(req: object): number | undefined {
  return (req as Record<PropertyKey, unknown>)[INVALID_UTF8] as number | undefined;
}

/** Walks the top-level fields of a protobuf message; undefined when every listed string is UTF-8. */
export function firstInvalidUtf8Field(buf: Uint8Array, fields: readonly number[]): number | undefined {
  const reader = new BinaryReader(buf);
  try {
    while (reader.pos < reader.len) {
      const [no, type] = reader.tag();
      if (type === WireType.LengthDelimited && fields.includes(no)) {
        if (!isUtf8(reader.bytes())) return no;
      } else {
        reader.skip(type, no);
      }
    }
  } catch {
    return undefined; // malformed framing: the generated decoder has already refused it
  }
  return undefined;
}
