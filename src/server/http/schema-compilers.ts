// Fastify validates requests and serialises answers with the zod schemas routes declare
// (operations.ts), so the rules are written once and the OpenAPI document is made from them.
// Our own compilers rather than a type-provider package: a refusal must stay exactly
// `{error:{code:"invalid_parameter", message, param}}` naming the first field at fault
// (parseBody), which the handler's ApiError path already answers.
//
// The answers of the polled operations (`precompiledAnswer`, issue 40: every client polls
// `GET /v3/svc/renders/{id}`) are written by a serialiser fast-json-stringify generates once from
// the schema's JSON Schema, instead of a zod parse per answer: the same JSON for a well-formed
// answer (declared fields only, in the schema's order), at a third of the CPU. Under the tests
// (VITEST) or with SVC_SERVER_CHECK_ANSWERS=1 every such answer is also parsed with zod and the
// two texts compared, so a schema the generated serialiser reads differently fails a test.
import fastJsonStringify from "fast-json-stringify";
import type {
  FastifyInstance,
  FastifySchemaCompiler,
  FastifySerializerCompiler,
  FastifyTypeProvider,
} from "fastify";
import { z } from "zod";
import { parseBody } from "./request";

/** Types `request.body`, `.query`, `.params` and `reply.send()` from a route's zod schemas. */
export interface ZodTypeProvider extends FastifyTypeProvider {
  validator: this["schema"] extends z.ZodType ? z.output<this["schema"]> : unknown;
  serializer: this["schema"] extends z.ZodType ? z.input<this["schema"]> : unknown;
}

const precompiled = new WeakSet<z.ZodType>();

/** Marks an answer schema to be serialised by a generated function (see the header). */
export function precompiledAnswer<T extends z.ZodType>(schema: T): T {
  precompiled.add(schema);
  return schema;
}

const validatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema }) =>
  (data) => {
    try {
      return { value: parseBody(schema, data) };
    } catch (error) {
      return { error: error as Error };
    }
  };

/**
 * The answer is checked against its schema before it leaves: a field the schema does not name is
 * dropped, and an answer of the wrong shape is a 500 (a bug here), never a wrong answer there.
 */
const serializerCompiler: FastifySerializerCompiler<z.ZodType> = ({ schema }) =>
  answerSerializer(schema);

/** The function that writes a route's answer: what fastify calls, and the poll lane too. */
export function answerSerializer(schema: z.ZodType): (data: unknown) => string {
  const checked = (data: unknown) => JSON.stringify(schema.parse(data));
  if (!precompiled.has(schema)) return checked;
  const fast = compileAnswerSerializer(schema);
  if (!checkAnswers()) return fast;
  return (data) => {
    const expected = checked(data);
    const written = fast(data);
    if (written !== expected) {
      throw new Error(`the generated serialiser wrote ${written} where zod wrote ${expected}`);
    }
    return written;
  };
}

function checkAnswers(): boolean {
  return process.env.VITEST !== undefined || process.env.SVC_SERVER_CHECK_ANSWERS === "1";
}

/** fast-json-stringify's function for the JSON Schema of what `schema` outputs. */
export function compileAnswerSerializer(schema: z.ZodType): (data: unknown) => string {
  const { $schema: _dialect, ...jsonSchema } = z.toJSONSchema(schema, {
    io: "output",
    unrepresentable: "any",
  });
  return fastJsonStringify(
    withNullableTypes(jsonSchema) as Parameters<typeof fastJsonStringify>[0],
  );
}

/**
 * zod writes a nullable integer as `anyOf: [{type: "integer", ...}, {type: "null"}]`, which
 * fast-json-stringify resolves by validating each value against the branches; the same
 * `type: ["integer", "null"]` is written without.
 */
function withNullableTypes(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withNullableTypes);
  if (!node || typeof node !== "object") return node;
  const entries = Object.entries(node).map(([key, value]) => [key, withNullableTypes(value)]);
  const result = Object.fromEntries(entries) as Record<string, unknown>;
  const anyOf = result.anyOf as Array<Record<string, unknown>> | undefined;
  if (anyOf?.length === 2 && Object.keys(result).length === 1) {
    const [value, other] = anyOf[1]!.type === "null" ? anyOf : [anyOf[1]!, anyOf[0]!];
    const isPlain = typeof value!.type === "string" && value!.type !== "object";
    if (other!.type === "null" && Object.keys(other!).length === 1 && isPlain) {
      return { ...value, type: [value!.type, "null"] };
    }
  }
  return result;
}

export function useZodSchemas(app: FastifyInstance): void {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
}
