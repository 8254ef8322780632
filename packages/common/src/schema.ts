// Helpers for a tool's value schema (defineTool's ParameterSchemaSpec): closed objects, required fields, variant tags.
import type { ParameterSchemaSpec } from '@deepseek-ai/dsh-tools'

/** A closed object: a value with a key the schema does not name fails the host's output check. */
export const object = <const P extends ParameterSchemaSpec>(properties: P) =>
  ({ type: 'object', additionalProperties: false, properties }) as const

/** `spec`, required in its object. */
export const required = <const S extends object>(spec: S) => ({ ...spec, required: true as const })

/** A variant's tag: the constant string `name`, required. */
export const tag = <const K extends string>(name: K) => ({ type: 'string', const: name, required: true }) as const
