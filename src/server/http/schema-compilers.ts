// Fastify validates requests and serialises answers with the zod schemas routes declare
// (operations.ts), so the rules are written once and the OpenAPI document is made from them.
// Our own compilers rather than a type-provider package: a refusal must stay exactly
// `{error:{code:"invalid_parameter", message, param}}` naming the first field at fault
// (parseBody), which the handler's ApiError path already answers.
import type {
  FastifyInstance,
  FastifySchemaCompiler,
  FastifySerializerCompiler,
  FastifyTypeProvider,
} from "fastify";
import type { z } from "zod";
import { parseBody } from "./request";

/** Types `request.body`, `.query`, `.params` and `reply.send()` from a route's zod schemas. */
export interface ZodTypeProvider extends FastifyTypeProvider {
  validator: this["schema"] extends z.ZodType ? z.output<this["schema"]> : unknown;
  serializer: this["schema"] extends z.ZodType ? z.input<this["schema"]> : unknown;
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
const serializerCompiler: FastifySerializerCompiler<z.ZodType> =
  ({ schema }) =>
  (data) =>
    JSON.stringify(schema.parse(data));

export function useZodSchemas(app: FastifyInstance): void {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
}
